import { Type, type Static } from '@sinclair/typebox';
import { PASSWORD_LENGTH_MAX, PASSWORD_LENGTH_MIN } from '../accounts/passwords.js';
import { EMAIL_PATTERN } from '../accounts/policies.js';
import { Timestamp } from '../../core/schemas.js';

const ROLE_DESCRIPTION = '`admin`: everything; `support`: reads, no money actions, no settings';
const Role = Type.Union([Type.Literal('admin'), Type.Literal('support')], { description: ROLE_DESCRIPTION });

export const CreateOperatorBody = Type.Object(
  {
    email: Type.String({ pattern: EMAIL_PATTERN.source, maxLength: 254, description: 'Its login; lower-cased' }),
    password: Type.String({ minLength: PASSWORD_LENGTH_MIN, maxLength: PASSWORD_LENGTH_MAX }),
    role: Type.Optional(Type.Union([Type.Literal('admin'), Type.Literal('support')], { description: ROLE_DESCRIPTION, default: 'admin' })),
  },
  { title: 'CreateOperatorBody', additionalProperties: false },
);
export type CreateOperatorBody = Static<typeof CreateOperatorBody>;

export const Operator = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('operator'),
    email: Type.String(),
    role: Role,
    secondFactor: Type.Boolean({ description: 'Whether the second factor is set up; the console opens nothing until it is' }),
    created: Timestamp,
  },
  { title: 'Operator' },
);

export const AuditEntry = Type.Object(
  {
    id: Type.String({ description: 'Its place in the log: entries only ever follow one another' }),
    object: Type.Literal('operator_audit_entry'),
    operator: Type.Union([Type.Object({ id: Type.String(), email: Type.String() }), Type.Null()], { description: 'Who acted; null: the operator token, through the API' }),
    via: Type.Union([Type.Literal('console'), Type.Literal('api')]),
    action: Type.String({ description: 'e.g. `activation.approved`, `product.suspended`, `product.updated`, `operator.invited`' }),
    target: Type.Union([Type.String(), Type.Null()], { description: 'What it was done to: a product, an operator, a searched id' }),
    detail: Type.Union([Type.String(), Type.Null()]),
    created: Timestamp,
  },
  { title: 'OperatorAuditEntry' },
);

export const AuditQuery = Type.Object(
  {
    before: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$', description: 'An entry id: the page of entries before it' })),
    target: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only the entries about this object' })),
  },
  { additionalProperties: false },
);
export type AuditQuery = Static<typeof AuditQuery>;
