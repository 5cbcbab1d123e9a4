import { Type, type Static } from '@sinclair/typebox';
import { CustomerRef, Timestamp } from '../../core/schemas.js';
import { listQuery, type ListQuery } from '../../core/pagination.js';

export const Card = Type.Object({
  id: Type.String(),
  object: Type.Literal('card'),
  status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('BLOCKED'), Type.Literal('DELETED')]),
  maskedPan: Type.String({ description: 'First six and last four digits' }),
  rail: Type.Union([Type.Literal('uzcard'), Type.Literal('humo')]),
  expiry: Type.String({ description: 'MM/YY' }),
  customerRef: Type.Union([Type.String(), Type.Null()]),
  livemode: Type.Boolean(),
  created: Timestamp,
}, { title: 'Card' });
export type Card = Static<typeof Card>;

export const CardsQuery = listQuery({
  customerRef: Type.Optional(CustomerRef),
  status: Type.Optional(Type.Union([Type.Literal('ACTIVE'), Type.Literal('BLOCKED'), Type.Literal('DELETED')])),
});
export type CardsQuery = ListQuery & Static<typeof CardsQuery>;
