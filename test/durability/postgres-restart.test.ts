// PostgreSQL restarted under load (`pg_ctlcluster … restart -m immediate`). This stops the server every other test uses,
// so it runs alone: `.ci/run` runs it after the suite with TOLOV_TEST_POSTGRES_RESTART set; otherwise it is skipped.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard } from '../support/binding.js';
import { engine, startService, type Merchant, type TestService } from '../support/harness.js';
import { charge, chargeUntilCreated, expectChargesSettled } from '../support/payments.js';

const enabled = engine === 'postgres' && process.env.TOLOV_TEST_POSTGRES_RESTART === '1';
const CHARGES = 60;
const CONCURRENCY = 6;

function restartPostgres(): void {
  const [version] = readdirSync('/etc/postgresql');
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version!, 'main', 'restart', '-m', 'immediate'], { stdio: 'ignore' });
}

let service: TestService;
let shop: Merchant;
let card: string;

describe.runIf(enabled)('PostgreSQL restarted under load', () => {
  beforeAll(async () => {
    service = await startService();
    shop = await service.createMerchant({ feeBps: 100 });
    card = await bindCard(service, shop.test, '8600000000000007');
  });
  afterAll(() => service?.stop());

  it('fails requests cleanly while it is down, recovers, and keeps every invariant', async () => {
    const statuses: number[] = [];
    let next = 0;
    let restarted = false;
    const worker = async () => {
      while (next < CHARGES) {
        const index = next++;
        if (index === CHARGES / 3 && !restarted) {
          restarted = true;
          restartPostgres();
        }
        statuses.push((await charge(service, shop.test, { amount: 1_000 + index, card }, `restart-${index}`)).status);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    expect(restarted).toBe(true);
    // While the server was away, requests failed with 503 and Retry-After, never a wrong answer or an internal error.
    expect(statuses.filter((status) => status !== 201 && status !== 503)).toEqual([]);

    // The pool recovered: every key, retried, gets its one intent.
    const ids = new Set<string>();
    for (let index = 0; index < CHARGES; index++) {
      const reply = await chargeUntilCreated(service, shop.test, { amount: 1_000 + index, card }, `restart-${index}`);
      expect(reply.status, reply.text).toBe(201);
      ids.add(reply.body.id);
    }
    expect(ids.size).toBe(CHARGES);
    await expectChargesSettled(service, shop, CHARGES);
  }, 180_000);
});
