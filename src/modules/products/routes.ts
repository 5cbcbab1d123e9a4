import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/db.js';
import type { ApiKeyCache } from '../../http/api-key-cache.js';
import { IdParams } from '../../http/schemas.js';
import { createProduct, addKey, modeOf, revokeKey, SCOPES } from './service.js';

const ScopeList = Type.Array(Type.Union(SCOPES.map((scope) => Type.Literal(scope))), { minItems: 1, maxItems: SCOPES.length, uniqueItems: true });
const Mode = Type.Union([Type.Literal('test'), Type.Literal('live')]);

const CreateProductBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    scopes: Type.Optional(ScopeList),
    feeBps: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, description: 'Fee in basis points of the amount' })),
  },
  { additionalProperties: false },
);
type CreateProductBody = Static<typeof CreateProductBody>;

const Product = Type.Object({
  id: Type.String(),
  object: Type.Literal('product'),
  name: Type.String(),
  scopes: ScopeList,
  feeBps: Type.Integer(),
  keys: Type.Object({ test: Type.String(), live: Type.String() }, { description: 'Secret keys, shown only here' }),
  created: Type.String({ format: 'date-time' }),
});

const CreateKeyBody = Type.Object({ mode: Mode, scopes: Type.Optional(ScopeList) }, { additionalProperties: false });
type CreateKeyBody = Static<typeof CreateKeyBody>;

const ApiKey = Type.Object({
  id: Type.String(),
  object: Type.Literal('api_key'),
  secret: Type.Optional(Type.String({ description: 'Shown only when the key is created' })),
  mode: Mode,
  scopes: ScopeList,
  revoked: Type.Boolean(),
});

export function productRoutes(app: FastifyInstance, db: Db, keys: ApiKeyCache, defaultFeeBps: number): void {
  const config = { auth: { kind: 'admin' } } as const;
  const tags = ['operator'];

  app.post<{ Body: CreateProductBody }>(
    '/admin/v1/products',
    { config, schema: { tags, summary: 'Create a product with a test and a live key', body: CreateProductBody, response: { 201: Product } } },
    async (request, reply) => {
      const { product, keys } = await createProduct(db, {
        name: request.body.name,
        scopes: request.body.scopes ?? [...SCOPES],
        feeBps: request.body.feeBps ?? defaultFeeBps,
      });
      return reply.code(201).send({
        id: product.id,
        object: 'product',
        name: product.name,
        scopes: product.scopes,
        feeBps: product.fee_bps,
        keys,
        created: product.created_at.toISOString(),
      });
    },
  );

  app.post<{ Params: IdParams; Body: CreateKeyBody }>(
    '/admin/v1/products/:id/keys',
    { config, schema: { tags, summary: 'Issue another secret key', params: IdParams, body: CreateKeyBody, response: { 201: ApiKey } } },
    async (request, reply) => {
      const { row, secret } = await addKey(db, request.params.id, request.body);
      return reply.code(201).send({ id: row.id, object: 'api_key', secret, mode: modeOf(row.livemode), scopes: row.scopes, revoked: false });
    },
  );

  app.post<{ Params: IdParams }>(
    '/admin/v1/keys/:id/revoke',
    { config, schema: { tags, summary: 'Revoke a key; it answers 401 from then on', params: IdParams, response: { 200: ApiKey } } },
    async (request) => {
      const row = await revokeKey(db, keys, request.params.id);
      return { id: row.id, object: 'api_key', mode: modeOf(row.livemode), scopes: row.scopes, revoked: true };
    },
  );
}
