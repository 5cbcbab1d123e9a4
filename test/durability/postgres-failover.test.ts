// PostgreSQL failover under load: a primary and a synchronous streaming standby (two clusters of the machine's
// PostgreSQL, built and removed by the test), DATABASE_URL listing both. Charges run, the primary is stopped hard, the
// standby promoted: the service finds it without a restart, no acknowledged charge is lost, every key ends with one
// intent, and the books hold. Runs on the PostgreSQL project wherever the server's binaries are installed.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/db.js';
import { bindCard } from '../support/binding.js';
import { ADMIN_TOKEN, engine, startService, type Merchant, type Reply, type TestService } from '../support/harness.js';
import { charge, chargeUntilCreated, expectChargesSettled } from '../support/payments.js';
import { serverBinaries, startReplicated, type Replicated } from '../support/replication.js';

const CHARGES = 90;
const CONCURRENCY = 6;
/** The primary fails when this many charges have been sent; the standby is promoted a moment later. */
const FAIL_AT = 30;
const PROMOTE_AFTER_MS = 500;
const DATABASE = 'tolov';

let cluster: Replicated;

describe.runIf(engine === 'postgres' && serverBinaries() !== null)('PostgreSQL failover to a synchronous standby', () => {
  beforeAll(async () => {
    cluster = await startReplicated();
    const admin = new pg.Client({ connectionString: cluster.url('postgres', [cluster.primaryPort]) });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${DATABASE}`);
    await admin.end();
  }, 120_000);
  afterAll(() => cluster?.remove());

  it('refuses to start when no listed host accepts writes, naming each host', async () => {
    await expect(openPostgres(cluster.url('postgres', [cluster.standbyPort]))).rejects.toThrow(
      `No host of DATABASE_URL can be written to: 127.0.0.1:${cluster.standbyPort} is a standby`,
    );
  });

  it('loses no acknowledged charge when the primary fails under load, and finds the promoted standby', async () => {
    // The standby is listed first: the service must pick the host that accepts writes, not the first.
    const db = await openPostgres(cluster.url(DATABASE, [cluster.standbyPort, cluster.primaryPort]));
    const service = await startService({}, { db });
    try {
      const shop = await service.createMerchant({ feeBps: 100 });
      const card = await bindCard(service, shop.test, '8600000000000007');
      const body = (index: number) => ({ amount: 1_000 + index, card });

      const { created, statuses, failover } = await chargesThroughFailover(service, shop, body);
      await failover;
      // While no primary answered, requests failed with 503 and Retry-After (and a key whose request died with its
      // connection answered 409 until its lock lapsed); never an internal error.
      expect(statuses.filter((status) => status === 503).length).toBeGreaterThan(0);
      expect([...new Set(statuses)].filter((status) => ![201, 409, 503].includes(status))).toEqual([]);

      // Every key got its one intent, and every acknowledgment holds on the new primary: the key answers the same.
      expect(new Set(created.map((reply) => reply.body.id)).size).toBe(CHARGES);
      for (const [index, reply] of created.entries()) {
        const again = await charge(service, shop.test, body(index), `failover-${index}`);
        expect(again.body, `charge ${index}`).toEqual(reply.body);
        const read = await service.call({ method: 'GET', url: `/subscribe/v1/charges/${reply.body.id}`, key: shop.test });
        expect(read.body).toMatchObject({ id: reply.body.id, status: reply.body.status, amount: reply.body.amount });
      }
      await expectBooksRight(service, shop);
    } finally {
      await service.stop();
    }
  }, 180_000);
});

/**
 * Charges CHARGES keys from CONCURRENCY clients, each retrying its key until the charge is created, as a client does;
 * the primary fails after FAIL_AT keys were sent, and the standby is promoted while clients retry.
 */
async function chargesThroughFailover(service: TestService, shop: Merchant, body: (index: number) => Record<string, unknown>) {
  const created: Reply[] = [];
  const statuses: number[] = [];
  let failover: Promise<void> | null = null;
  let next = 0;
  const client = async () => {
    while (next < CHARGES) {
      const index = next++;
      if (index === FAIL_AT) {
        failover = cluster.killPrimary().then(async () => {
          await new Promise((resolve) => setTimeout(resolve, PROMOTE_AFTER_MS));
          await cluster.promoteStandby();
        });
      }
      const reply = await chargeUntilCreated(service, shop.test, body(index), `failover-${index}`, statuses);
      expect(reply.status, reply.text).toBe(201);
      created[index] = reply;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
  return { created, statuses, failover: failover ?? Promise.reject(new Error('the primary never failed')) };
}

/** The charges settled as expected, and every money check of the books is ok. */
async function expectBooksRight(service: TestService, shop: Merchant): Promise<void> {
  await expectChargesSettled(service, shop, CHARGES);
  const checks = await service.call({ method: 'GET', url: '/admin/v1/checks', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(checks.status).toBe(200);
  expect(checks.body.data.filter((check: { ok: boolean }) => !check.ok)).toEqual([]);
}
