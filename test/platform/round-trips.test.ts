// /metrics counts the service's round trips to its database and the statements it ran, as they go on the wire. A
// charge's cost is mostly its round trips: this pins how many a lone charge makes, the same on both engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Traffic } from '../../src/db/types.js';
import { startService, type TestService } from '../support/harness.js';
import { bindCard } from '../support/binding.js';
import { charge } from '../support/payments.js';
import { databaseTraffic } from '../support/prometheus.js';

const METRICS_TOKEN = 'mtk_8kQ2vXn5Rw7Lp3Zb9Tc4Yh6Jd1Mf0Gs';
let service: TestService;
beforeAll(async () => {
  service = await startService({ TOLOV_METRICS_TOKEN: METRICS_TOKEN });
});
afterAll(() => service.stop());


const traffic = () => databaseTraffic(service, METRICS_TOKEN);

/** What `act` added to the counts, the fewest of three tries: anything else the service did meanwhile only adds. */
async function fewest(act: () => Promise<unknown>): Promise<Traffic> {
  const seen: Traffic[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const before = await traffic();
    await act();
    const after = await traffic();
    seen.push({ roundTrips: after.roundTrips - before.roundTrips, statements: after.statements - before.statements });
  }
  return { roundTrips: Math.min(...seen.map((s) => s.roundTrips)), statements: Math.min(...seen.map((s) => s.statements)) };
}

describe('the database traffic /metrics counts', () => {
  it('is 4 round trips and 11 statements for a charge: one for its intent, two for its outcome, one for the test bank', async () => {
    const shop = await service.createMerchant();
    const card = await bindCard(service, shop.test, '8600000000000007');
    // The first charge prepares its statements on the connection (more round trips, once).
    expect((await charge(service, shop.test, { amount: 100, card })).status).toBe(201);
    // A scrape reads the counts before it sends its own statement (the queues' depths): the first of a pair is counted.
    const scrape = await fewest(async () => {});
    expect(scrape).toEqual({ roundTrips: 1, statements: 1 });
    const charged = await fewest(async () => expect((await charge(service, shop.test, { amount: 100, card })).status).toBe(201));
    // Its intent: BEGIN, the intent, the key, COMMIT, in one exchange (the intent's row is read once it committed). The
    // test bank's record: one statement. Its outcome: BEGIN, the intent's move, the event, the ledger posting, the key's
    // answer, COMMIT; its first statement waits for its answer, and COMMIT takes the writes after it.
    expect({ roundTrips: charged.roundTrips - scrape.roundTrips, statements: charged.statements - scrape.statements }).toEqual({ roundTrips: 4, statements: 11 });
  });

  it('is one round trip for a transaction that only writes, and a statement for each of its writes, BEGIN and COMMIT', async () => {
    const wrote = await fewest(() =>
      service.db.transaction(async (tx) => {
        for (let n = 0; n < 3; n++) tx.write('SELECT $1::int', [n]);
      }),
    );
    // BEGIN, the three writes and COMMIT, in one exchange; and the first scrape's own.
    expect(wrote).toEqual({ roundTrips: 1 + 1, statements: 5 + 1 });
  });
});
