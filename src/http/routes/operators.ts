import type { FastifyPluginAsync } from 'fastify';
import { Type } from '@sinclair/typebox';
import { AuditEntry, AuditQuery, CreateOperatorBody, Operator } from '../../modules/operators/schema.js';
import type { OperatorsService } from '../../modules/operators/service.js';
import type { AuditRow, OperatorRow } from '../../modules/operators/store.js';

const presentOperator = (row: OperatorRow) => ({
  id: row.user_id,
  object: 'operator' as const,
  email: row.email,
  role: row.role,
  secondFactor: row.totp_enabled,
  created: row.created_at.toISOString(),
});

const presentEntry = (row: AuditRow) => ({
  id: row.seq,
  object: 'operator_audit_entry' as const,
  operator: row.operator_id === null ? null : { id: row.operator_id, email: row.operator_email ?? '' },
  via: row.via,
  action: row.action,
  target: row.target,
  detail: row.detail,
  created: row.created_at.toISOString(),
});

const list = <T extends Parameters<typeof Type.Array>[0]>(item: T, title: string) =>
  Type.Object({ object: Type.Literal('list'), data: Type.Array(item), has_more: Type.Boolean() }, { title });

/** Tolov's staff: the first operator, the list of operators, and the audit log of what they did. */
export const operatorRoutes: FastifyPluginAsync<{ operators: OperatorsService }> = async (app, { operators }) => {
  const config = { auth: { kind: 'admin' } } as const;
  const tags = ['operator'];

  app.post<{ Body: CreateOperatorBody }>(
    '/admin/v1/operators',
    {
      config,
      schema: {
        tags,
        operationId: 'createOperator',
        summary: "Create the first operator of the console; the next are invited by an admin from the console",
        description: 'Answers 409 `INVALID_STATE` once an operator exists, or when the e-mail has a Tolov login already. The operator sets up the second factor at the first log-in to `/operator`.',
        body: CreateOperatorBody,
        response: { 201: Operator },
      },
    },
    async (request, reply) => {
      const { email, password, role } = request.body;
      const row = await operators.createFirst({ email: email.toLowerCase(), password, role: role ?? 'admin' });
      return reply.code(201).send(presentOperator(row));
    },
  );

  app.get(
    '/admin/v1/operators',
    { config, schema: { tags, operationId: 'listOperators', summary: 'The operators, oldest first (the first 200)', response: { 200: list(Operator, 'OperatorList') } } },
    async () => {
      const { rows, hasMore } = await operators.list();
      return { object: 'list' as const, data: rows.map(presentOperator), has_more: hasMore };
    },
  );

  app.get<{ Querystring: AuditQuery }>(
    '/admin/v1/audit_log',
    {
      config,
      schema: {
        tags,
        operationId: 'listOperatorAudit',
        summary: 'Every operator action, newest first, 100 a page: who, through what, did what to what, and when',
        description: 'Append-only: no route or statement changes or removes an entry. Page with `before` (the last entry id of a page).',
        querystring: AuditQuery,
        response: { 200: list(AuditEntry, 'OperatorAuditList') },
      },
    },
    async (request) => {
      const { before, target } = request.query;
      const page = await operators.auditLog({ before: before === undefined ? undefined : BigInt(before), target: target ?? null });
      return { object: 'list' as const, data: page.rows.map(presentEntry), has_more: page.hasMore };
    },
  );
};
