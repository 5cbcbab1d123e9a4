import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { IdParams } from '../../core/schemas.js';
import type { OperatorActions } from '../../modules/operators/actions.js';
import { API_ACTOR } from '../../modules/operators/service.js';
import { FEE_BPS_MAX, modeOf, SCOPES, SEARCH_PAGE_MAX, SUSPENSION_REASON_MAX, type ProductsService } from '../../modules/products/service.js';
import type { KeyRow, ProductRow } from '../../modules/products/store.js';

const ScopeList = Type.Array(Type.Union(SCOPES.map((scope) => Type.Literal(scope))), { minItems: 1, maxItems: SCOPES.length, uniqueItems: true });
const Mode = Type.Union([Type.Literal('test'), Type.Literal('live')]);

const FeeBps = Type.Integer({ minimum: 0, maximum: FEE_BPS_MAX, description: 'Fee in basis points of the amount' });
const ReceiptRequired = Type.Boolean({
  description: 'Whether its live orders and charges must carry fiscal lines (`receipt`); true unless the merchant fiscalizes its sales itself',
});

const CreateProductBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    scopes: Type.Optional(ScopeList),
    feeBps: Type.Optional(FeeBps),
    receiptRequired: Type.Optional(ReceiptRequired),
  },
  { title: 'CreateProductBody', additionalProperties: false },
);
type CreateProductBody = Static<typeof CreateProductBody>;

const Product = Type.Object({
  id: Type.String(),
  object: Type.Literal('product'),
  name: Type.String(),
  scopes: ScopeList,
  feeBps: Type.Integer(),
  receiptRequired: Type.Boolean(),
  keys: Type.Object({ test: Type.String(), live: Type.String() }, { description: 'Secret keys, shown only here' }),
  keyIds: Type.Object({ test: Type.String(), live: Type.String() }, { description: 'The ids of those keys, to list or revoke them' }),
  created: Type.String({ format: 'date-time' }),
}, { title: 'Product' });

const ProductStatus = Type.Object({
  id: Type.String(),
  object: Type.Literal('product'),
  name: Type.String(),
  liveEnabled: Type.Boolean(),
  receiptRequired: Type.Boolean(),
  feeBps: Type.Integer({ description: 'Fee in basis points of the amount, for payments from now on' }),
  account: Type.Union([Type.String(), Type.Null()], { description: 'The dashboard account that owns it (null: made by the operator API)' }),
  suspension: Type.Union([Type.Object({ since: Type.String({ format: 'date-time' }), reason: Type.String() }), Type.Null()], {
    description: 'Since when and why Tolov suspended it (no payments, card bindings, orders or payouts); null while it may take payments',
  }),
}, { title: 'ProductStatus' });

const SuspendBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: SUSPENSION_REASON_MAX, description: 'Why, as the merchant and Tolov staff will read it' }) },
  { title: 'SuspendProductBody', additionalProperties: false },
);
type SuspendBody = Static<typeof SuspendBody>;

const UpdateProductBody = Type.Object(
  { receiptRequired: Type.Optional(ReceiptRequired), feeBps: Type.Optional(FeeBps) },
  { title: 'UpdateProductBody', additionalProperties: false, minProperties: 1 },
);
type UpdateProductBody = Static<typeof UpdateProductBody>;

const CreateKeyBody = Type.Object({ mode: Mode, scopes: Type.Optional(ScopeList) }, { title: 'CreateKeyBody', additionalProperties: false });
type CreateKeyBody = Static<typeof CreateKeyBody>;

const ApiKey = Type.Object({
  id: Type.String(),
  object: Type.Literal('api_key'),
  secret: Type.Optional(Type.String({ description: 'Shown only when the key is created' })),
  mode: Mode,
  scopes: ScopeList,
  prefix: Type.String({ description: 'sk_test_ or sk_live_' }),
  last4: Type.Union([Type.String(), Type.Null()], { description: "The secret's last four characters (null for keys made before they were kept)" }),
  created: Type.String({ format: 'date-time' }),
  lastUsed: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'To the minute; null if never used' }),
  revoked: Type.Boolean(),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
}, { title: 'ApiKey' });

const ApiKeyList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ApiKey), has_more: Type.Boolean() }, { title: 'ApiKeyList' });

/** A key as the operator sees it: never its secret, which only its creation shows. */
function presentKey(row: KeyRow) {
  return {
    id: row.id,
    object: 'api_key' as const,
    mode: modeOf(row.livemode),
    scopes: row.scopes,
    prefix: `sk_${modeOf(row.livemode)}_`,
    last4: row.secret_last4,
    created: row.created_at.toISOString(),
    lastUsed: row.last_used_at?.toISOString() ?? null,
    revoked: row.revoked_at !== null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

function presentStatus(product: ProductRow) {
  return {
    id: product.id,
    object: 'product' as const,
    name: product.name,
    liveEnabled: product.live_enabled,
    receiptRequired: product.receipt_required,
    feeBps: product.fee_bps,
    account: product.account_id,
    suspension: product.suspended_at === null ? null : { since: product.suspended_at.toISOString(), reason: product.suspension_reason! },
  };
}

const ProductsQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: "A product id (exactly), or part of its name or of an owner's e-mail (case-insensitively)" })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SEARCH_PAGE_MAX, default: SEARCH_PAGE_MAX })),
    starting_after: Type.Optional(Type.String({ maxLength: 64, description: 'The last product id of the page before' })),
  },
  { additionalProperties: false },
);
type ProductsQuery = Static<typeof ProductsQuery>;

const ProductList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ProductStatus), has_more: Type.Boolean() }, { title: 'ProductList' });

/** The operator's search of products, as the console's *Products* page makes it. */
function searchRoute(app: FastifyInstance, products: ProductsService): void {
  app.get<{ Querystring: ProductsQuery }>(
    '/admin/v1/products',
    {
      config: { auth: { kind: 'admin' } },
      schema: { tags: ['operator'], operationId: 'listProducts', summary: 'Products, newest first: all of them, or those a search finds', querystring: ProductsQuery, response: { 200: ProductList } },
    },
    async (request) => {
      const { q, limit, starting_after: after } = request.query;
      if (after !== undefined && !(await products.exists(after))) {
        throw new ApiError('VALIDATION_ERROR', 'starting_after must be the id of a product', { param: 'starting_after' });
      }
      const found = await products.search({ q: q ?? '', after: after ?? null, limit: limit ?? SEARCH_PAGE_MAX });
      return { object: 'list' as const, data: found.rows.map(presentStatus), has_more: found.hasMore };
    },
  );
}

/** The operator's hold on a product that must not take payments: suspend, resume, and reading where it stands. */
function suspensionRoutes(app: FastifyInstance, products: ProductsService, actions: OperatorActions): void {
  const config = { auth: { kind: 'admin' } } as const;
  const tags = ['operator'];
  app.get<{ Params: IdParams }>(
    '/admin/v1/products/:id',
    { config, schema: { tags, operationId: 'retrieveProduct', summary: 'Read where a product stands: live mode, receipts, suspension', params: IdParams, response: { 200: ProductStatus } } },
    async (request) => presentStatus(await products.find(request.params.id)),
  );
  app.post<{ Params: IdParams; Body: SuspendBody }>(
    '/admin/v1/products/:id/suspend',
    {
      config,
      schema: {
        tags,
        operationId: 'suspendProduct',
        summary: 'Suspend a product: its payments, card bindings, orders and payouts are refused on every process at once',
        description: 'Its calls that move money, bind a card or create an order answer 403 `PRODUCT_SUSPENDED`, its hosted pages say the shop cannot take payments, and its payouts wait; reads, refunds of past payments and webhooks go on.',
        params: IdParams,
        body: SuspendBody,
        response: { 200: ProductStatus },
      },
    },
    async (request) => presentStatus(await actions.suspend(API_ACTOR, request.params.id, request.body.reason)),
  );
  app.post<{ Params: IdParams }>(
    '/admin/v1/products/:id/resume',
    { config, schema: { tags, operationId: 'resumeProduct', summary: 'Resume a suspended product: everything works again', params: IdParams, response: { 200: ProductStatus } } },
    async (request) => presentStatus(await actions.resume(API_ACTOR, request.params.id)),
  );
}

/** The operator's keys of a product: issue, list, revoke. */
function keyRoutes(app: FastifyInstance, products: ProductsService, actions: OperatorActions): void {
  const config = { auth: { kind: 'admin' } } as const;
  const tags = ['operator'];
  app.post<{ Params: IdParams; Body: CreateKeyBody }>(
    '/admin/v1/products/:id/keys',
    { config, schema: { tags, operationId: 'createApiKey', summary: 'Issue another secret key', params: IdParams, body: CreateKeyBody, response: { 201: ApiKey } } },
    async (request, reply) => {
      const { row, secret } = await actions.addKey(API_ACTOR, request.params.id, request.body);
      return reply.code(201).send({ ...presentKey(row), secret });
    },
  );

  app.get<{ Params: IdParams }>(
    '/admin/v1/products/:id/keys',
    { config, schema: { tags, operationId: 'listApiKeys', summary: "A product's keys, newest first, without their secrets", params: IdParams, response: { 200: ApiKeyList } } },
    async (request) => {
      const { rows, hasMore } = await products.listKeys(request.params.id);
      return { object: 'list', data: rows.map(presentKey), has_more: hasMore };
    },
  );

  app.post<{ Params: IdParams }>(
    '/admin/v1/keys/:id/revoke',
    { config, schema: { tags, operationId: 'revokeApiKey', summary: 'Revoke a key; it answers 401 from then on', params: IdParams, response: { 200: ApiKey } } },
    async (request) => {
      return presentKey(await actions.revokeKey(API_ACTOR, request.params.id));
    },
  );
}

export const productRoutes: FastifyPluginAsync<{ products: ProductsService; actions: OperatorActions }> = async (app, { products, actions }) => {
  const config = { auth: { kind: 'admin' } } as const;
  const tags = ['operator'];
  app.post<{ Body: CreateProductBody }>(
    '/admin/v1/products',
    { config, schema: { tags, operationId: 'createProduct', summary: 'Create a product with a test and a live key', body: CreateProductBody, response: { 201: Product } } },
    async (request, reply) => {
      const { product, keys, keyIds } = await actions.createProduct(API_ACTOR, request.body);
      return reply.code(201).send({
        id: product.id,
        object: 'product',
        name: product.name,
        scopes: product.scopes,
        feeBps: product.fee_bps,
        receiptRequired: product.receipt_required,
        keys,
        keyIds,
        created: product.created_at.toISOString(),
      });
    },
  );

  app.post<{ Params: IdParams }>(
    '/admin/v1/products/:id/live',
    {
      config,
      schema: {
        tags,
        operationId: 'enableLiveMode',
        summary: "Enable live mode for a product signed up in the dashboard, once the merchant's business is verified",
        params: IdParams,
        response: { 200: ProductStatus },
      },
    },
    async (request) => {
      return presentStatus(await actions.enableLive(API_ACTOR, request.params.id));
    },
  );

  app.post<{ Params: IdParams; Body: UpdateProductBody }>(
    '/admin/v1/products/:id',
    {
      config,
      schema: {
        tags,
        operationId: 'updateProduct',
        summary: "Change a product's settings: its fee, and whether its live payments must carry fiscal lines",
        description: 'The fee applies to payments from then on. Recorded in the operator audit log, as every operator action is.',
        params: IdParams,
        body: UpdateProductBody,
        response: { 200: ProductStatus },
      },
    },
    async (request) => presentStatus(await actions.updateSettings(API_ACTOR, request.params.id, request.body)),
  );

  keyRoutes(app, products, actions);
  suspensionRoutes(app, products, actions);
  searchRoute(app, products);
};
