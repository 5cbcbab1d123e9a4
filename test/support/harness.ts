import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { openPglite, openPostgres } from '../../src/db/db.js';
import type { Db, Queryable } from '../../src/db/types.js';
import type { PhaseHooks } from '../../src/core/idempotency.js';
import type { CardBindingsService } from '../../src/modules/card-bindings/service.js';
import type { OrdersService } from '../../src/modules/orders/service.js';
import type { PaymentsService } from '../../src/modules/payments/service.js';
import type { PayoutsService } from '../../src/modules/payouts/service.js';
import type { PaymentLinksService } from '../../src/modules/payment-links/service.js';
import type { RefundsService } from '../../src/modules/refunds/service.js';
import type { HoldsService } from '../../src/modules/holds/service.js';
import type { ReceiptsService } from '../../src/modules/receipts/service.js';
import type { Lookup } from '../../src/modules/webhooks/sender.js';
import type { WebhooksService } from '../../src/modules/webhooks/service.js';
import { randomBase62 } from '../../src/lib/random.js';
import { createService } from '../../src/service.js';
import { Mailbox } from './mailbox.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
/** The key that seals stored webhook secrets in tests (any 32 bytes, in base64). */
export const SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');
export const engine = process.env.TOLOV_TEST_ENGINE === 'postgres' ? 'postgres' : 'pglite';

const TEMPLATE_ATTEMPTS_MAX = 10;

/**
 * A database of its own on the PostgreSQL server, copied from the run's migrated template, as PGlite tests get a copy
 * of theirs: workers (reconciliation, webhook delivery) act on the whole database, so tests must not share one.
 */
export async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const template = new URL(inject('postgresUrl'));
  const templateName = template.pathname.slice(1);
  const name = `${templateName}_${randomBase62(8).toLowerCase()}`;
  const server = new URL(template);
  server.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: server.toString() });
  await admin.connect();
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${templateName}`);
        break;
      } catch (error) {
        // Two copies of one template cannot start at the same instant; the other is done within moments.
        if (attempt >= TEMPLATE_ATTEMPTS_MAX || (error as { code?: string }).code !== '55006') throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(template);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: server.toString() });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** A migrated database of the test's own, on the project's engine; closing it also discards it. */
export async function openTestDb(): Promise<Db> {
  if (engine === 'postgres') {
    const database = await createPostgresDatabase();
    const db = await openPostgres(database.url);
    return {
      ...db,
      async close() {
        await db.close();
        await database.drop();
      },
    };
  }
  const template = await readFile(inject('pgliteTemplatePath'));
  return openPglite('memory://', { loadDataDir: new Blob([template]) });
}

/** The plan PostgreSQL would use for `sql`, as the text `EXPLAIN` prints. */
export async function explain(db: Queryable, sql: string, params: unknown[] = []): Promise<string> {
  return (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params)).map((row) => row['QUERY PLAN']).join('\n');
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
  // Tests read arbitrary fields of JSON answers.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface Call {
  method: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH';
  url: string;
  key?: string;
  body?: unknown;
  /** Sent as is, for malformed bodies. */
  payload?: string;
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

export interface Merchant {
  productId: string;
  test: string;
  live: string;
}

export interface TestService {
  app: FastifyInstance;
  db: Db;
  config: Config;
  orders: OrdersService;
  bindings: CardBindingsService;
  payments: PaymentsService;
  holds: HoldsService;
  refunds: RefundsService;
  receipts: ReceiptsService;
  payouts: PayoutsService;
  paymentLinks: PaymentLinksService;
  webhooks: WebhooksService;
  call(call: Call): Promise<Reply>;
  admin(method: Call['method'], url: string, body?: unknown): Promise<Reply>;
  createMerchant(body?: { name?: string; scopes?: string[]; feeBps?: number; receiptRequired?: boolean }): Promise<Merchant>;
  /** The SMTP server the service's mail goes to (TOLOV_SMTP_URL), and what it received. */
  mailbox: Mailbox;
  stop(): Promise<void>;
}

/**
 * The service on a fresh copy of the test database (or on `db`, which it then closes), driven through its HTTP surface
 * with `inject`. Workers do not run on their own: a test runs a batch when it wants one (`service.payments.reconcileDebits(…)`).
 */
export async function startService(
  env: Record<string, string> = {},
  options: { hooks?: PhaseHooks; lookup?: Lookup; db?: Db } = {},
): Promise<TestService> {
  const mailbox = await Mailbox.start();
  const config = loadConfig({ TOLOV_ADMIN_TOKEN: ADMIN_TOKEN, TOLOV_SECRETS_KEY: SECRETS_KEY, LOG_LEVEL: 'silent', TOLOV_SMTP_URL: mailbox.url, ...env });
  const db = options.db ?? (await openTestDb());
  const service = await createService(config, { ...options, db });
  await service.app.ready();

  const call = async ({ method, url, key, body, payload, idempotencyKey, headers = {} }: Call): Promise<Reply> => {
    const allHeaders: Record<string, string> = { ...headers };
    if (key !== undefined) allHeaders.authorization = `Bearer ${key}`;
    if (idempotencyKey !== undefined) allHeaders['idempotency-key'] = idempotencyKey;
    if (body !== undefined || payload !== undefined) allHeaders['content-type'] ??= 'application/json';
    const response = await service.app.inject({
      method,
      url,
      headers: allHeaders,
      ...(payload !== undefined ? { payload } : body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
    let parsed: unknown = undefined;
    try {
      parsed = response.body === '' ? undefined : JSON.parse(response.body);
    } catch {
      parsed = undefined;
    }
    return { status: response.statusCode, headers: response.headers, text: response.body, body: parsed };
  };

  const admin = (method: Call['method'], url: string, body?: unknown) =>
    call({ method, url, body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

  return {
    app: service.app,
    db,
    config,
    orders: service.orders,
    bindings: service.bindings,
    payments: service.payments,
    holds: service.holds,
    refunds: service.refunds,
    receipts: service.receipts,
    payouts: service.payouts,
    paymentLinks: service.paymentLinks,
    webhooks: service.webhooks,
    call,
    admin,
    async createMerchant(body = {}) {
      const reply = await admin('POST', '/admin/v1/products', { name: 'Test shop', ...body });
      if (reply.status !== 201) throw new Error(`product creation failed: ${reply.text}`);
      return { productId: reply.body.id, test: reply.body.keys.test, live: reply.body.keys.live };
    },
    mailbox,
    async stop() {
      await service.stop();
      await mailbox.stop();
    },
  };
}

let keyCounter = 0;
/** A fresh Idempotency-Key. */
export const idem = () => `test-${process.pid}-${Date.now()}-${++keyCounter}`;
