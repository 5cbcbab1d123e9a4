import type { PhaseHooks } from '../../src/core/idempotency.js';
import { bindCard } from './binding.js';
import { expect } from 'vitest';
import { idem, type Merchant, type Reply, type TestService } from './harness.js';

export const charge = (service: TestService, key: string, body: Record<string, unknown>, idempotencyKey = idem()): Promise<Reply> =>
  service.call({ method: 'POST', url: '/subscribe/v1/charges', key, idempotencyKey, body });

/** Binds `pan` and charges it `amount`; returns the intent. */
export async function chargeCard(service: TestService, key: string, pan: string, amount = 100_000) {
  const card = await bindCard(service, key, pan);
  const reply = await charge(service, key, { amount, card });
  if (reply.status !== 201) throw new Error(`charge failed: ${reply.text}`);
  return reply.body;
}

/**
 * Charges again under `idempotencyKey` until the charge is created, as a client retries after its database failed: a
 * key whose first request died with its connection stays locked until its lock lapses, so the test lets it lapse.
 */
export async function chargeUntilCreated(
  service: TestService,
  key: string,
  body: Record<string, unknown>,
  idempotencyKey: string,
  statuses: number[] = [],
): Promise<Reply> {
  let reply = await charge(service, key, body, idempotencyKey);
  statuses.push(reply.status);
  for (let attempt = 0; (reply.status === 409 || reply.status === 503) && attempt < 100; attempt++) {
    if (reply.status === 409) {
      await service.db.query("UPDATE idempotency_keys SET locked_at = now() - interval '2 minutes' WHERE key = $1", [idempotencyKey]);
    } else {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    reply = await charge(service, key, body, idempotencyKey);
    statuses.push(reply.status);
  }
  return reply;
}

/**
 * After charges through a failure, once reconciliation has run: `charges` intents of the product, none PROCESSING, the
 * balance equal to the succeeded ones' net, one event for each ended payment, and the test bank's books agreeing (a
 * debit it lost was fenced, and its payment failed).
 */
export async function expectChargesSettled(service: TestService, shop: Merchant, charges: number): Promise<void> {
  for (let round = 0; round < 3; round++) await reconcileNow(service);
  const [counts] = await service.db.query<{ intents: number; processing: number; net: number }>(
    `SELECT count(*)::int AS intents, count(*) FILTER (WHERE status = 'PROCESSING')::int AS processing,
            coalesce(sum(amount - fee) FILTER (WHERE status = 'SUCCEEDED'), 0)::bigint AS net
       FROM payment_intents WHERE product_id = $1`,
    [shop.productId],
  );
  expect(counts).toMatchObject({ intents: charges, processing: 0 });
  const { pending, available } = await balance(service, shop.test);
  expect(pending + available).toBe(counts!.net);
  const [wrong] = await service.db.query<{ events: number; books: number }>(
    `SELECT count(*) FILTER (WHERE (i.status IN ('SUCCEEDED', 'FAILED'))::int <> (SELECT count(*) FROM events e WHERE e.object_id = i.id))::int AS events,
            count(*) FILTER (WHERE (i.status = 'SUCCEEDED') <> (o.status IS NOT DISTINCT FROM 'SUCCEEDED'))::int AS books
       FROM payment_intents i LEFT JOIN test_rail_operations o ON o.operation_id = i.id WHERE i.product_id = $1`,
    [shop.productId],
  );
  expect(wrong).toEqual({ events: 0, books: 0 });
}

/** Lets the in-flight window of every open operation pass and runs one reconciliation batch of each kind. */
export async function reconcileNow(service: TestService): Promise<void> {
  await service.db.query(`UPDATE payment_intents SET reconcile_after = now() - interval '1 second' WHERE status = 'PROCESSING' AND held_at IS NULL`);
  await service.db.query(`UPDATE refunds SET reconcile_after = now() - interval '1 second' WHERE status = 'PENDING'`);
  await service.db.query(`UPDATE hold_ends SET reconcile_after = now() - interval '1 second' WHERE status = 'PENDING'`);
  await service.db.query(`UPDATE payouts SET next_attempt_at = now() - interval '1 second' WHERE status = 'IN_TRANSIT'`);
  await service.payments.reconcileDebits(100);
  await service.holds.reconcile(100);
  await service.refunds.reconcile(100);
  await service.payouts.reconcile(100);
}

/** How many times the test rail executed `operationId`: its fence (asked about, never executed) is not an execution. */
export const railOperations = async (service: TestService, operationId: string) =>
  (
    await service.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM test_rail_operations WHERE operation_id = $1 AND status <> 'FENCED'`,
      [operationId],
    )
  )[0]!.n;

export const eventsOf = (service: TestService, objectId: string) =>
  service.db.query<{ type: string; data: Record<string, unknown> }>('SELECT type, data FROM events WHERE object_id = $1 ORDER BY seq', [objectId]);

export const balance = async (service: TestService, key: string) => (await service.call({ method: 'GET', url: '/v1/balance', key })).body;

/** A row of the statement, as GET /v1/balance_transactions lists it. */
export interface StatementRow {
  id: string;
  type: string;
  amount: number;
  fee: number;
  net: number;
  status: 'pending' | 'available';
  source: string;
  payout: string | null;
  [field: string]: unknown;
}

/** The whole statement of `key`'s product and mode (narrowed by `query`), page after page, newest first. */
export async function statementOf(service: TestService, key: string, query = ''): Promise<StatementRow[]> {
  const rows: StatementRow[] = [];
  for (let after = ''; ; ) {
    const page = await service.call({ method: 'GET', url: `/v1/balance_transactions?limit=100${query}${after}`, key });
    if (page.status !== 200) throw new Error(`the statement answered ${page.status}: ${page.text}`);
    rows.push(...(page.body.data as StatementRow[]));
    if (!page.body.has_more) return rows;
    after = `&starting_after=${rows.at(-1)!.id}`;
  }
}

/** Phase hooks for a service, and a crash injected at a recovery point (`crash`) until `heal`. */
export function injectedCrashes() {
  const hooks: PhaseHooks = {};
  const crash = (where: keyof PhaseHooks, point: string) => {
    hooks[where] = (reached) => {
      if (reached === point) throw new Error(`injected crash at ${where}(${point})`);
    };
  };
  const heal = () => {
    delete hooks.afterCommit;
    delete hooks.afterCall;
  };
  return { hooks, crash, heal };
}
