// One Idempotency-Key sent at the same moment with two different bodies, one of which its first phase refuses: the key
// names one request and has one answer, whichever of the two claims it first; the other body gets 422, and every replay
// equals the first answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard } from '../support/binding.js';
import { idem, startService, type Merchant, type Reply, type TestService } from '../support/harness.js';
import { charge, chargeCard } from '../support/payments.js';

const ROUNDS = 100;

let service: TestService;
let shop: Merchant;
beforeAll(async () => {
  service = await startService();
  shop = await service.createMerchant();
});
afterAll(() => service.stop());

const refund = (paymentIntent: string, idempotencyKey: string) =>
  service.call({ method: 'POST', url: '/v1/refunds', key: shop.test, body: { paymentIntent }, idempotencyKey });

describe('one key, two bodies at once', () => {
  it(`has one answer per key, the other body 422, every replay equal to the first answer (${ROUNDS} rounds)`, async () => {
    const failed = await chargeCard(service, shop.test, '8600000000000015', 50_000);
    expect(failed.status).toBe('FAILED');
    const card = await bindCard(service, shop.test, '8600000000000007');
    const succeeded: string[] = [];
    for (let round = 0; round < ROUNDS; round++) succeeded.push((await charge(service, shop.test, { amount: 10_000 + round, card })).body.id);

    const winners = { refused: 0, refunded: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const key = idem();
      const bodies = round % 2 === 0 ? [failed.id, succeeded[round]!] : [succeeded[round]!, failed.id];
      const replies = await Promise.all(bodies.map((paymentIntent) => refund(paymentIntent, key)));
      const reused = replies.filter((reply) => reply.status === 422);
      expect(reused.map((reply) => reply.body.code), `round ${round}: ${replies.map((reply) => reply.text).join(' / ')}`).toEqual(['IDEMPOTENCY_KEY_REUSED']);
      const answer = replies.find((reply) => reply.status !== 422)!;
      const answered = bodies[replies.indexOf(answer)]!;
      expect([answer.status, answer.body.code ?? answer.body.status]).toEqual(answered === failed.id ? [409, 'PAYMENT_NOT_REFUNDABLE'] : [201, 'SUCCEEDED']);
      winners[answered === failed.id ? 'refused' : 'refunded'] += 1;
      await expectReplays(bodies, answered, answer, key);
      const refunds = await service.db.query('SELECT id FROM refunds WHERE payment_intent_id = $1', [succeeded[round]]);
      expect(refunds).toHaveLength(answered === failed.id ? 0 : 1);
    }
    // Both cases were met: the refused body first (the case that once ran both), and the accepted one first.
    expect(winners.refused).toBeGreaterThan(0);
    expect(winners.refunded).toBeGreaterThan(0);
  }, 300_000);
});

/** Each body sent again: the answered one gets the first answer byte for byte, the other 422 again. */
async function expectReplays(bodies: string[], answered: string, answer: Reply, key: string): Promise<void> {
  for (const paymentIntent of bodies) {
    const again = await refund(paymentIntent, key);
    if (paymentIntent === answered) {
      expect([again.status, again.text, again.headers['idempotent-replayed']]).toEqual([answer.status, answer.text, 'true']);
    } else {
      expect([again.status, again.body.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
    }
  }
}
