// A dashboard or console session is looked up only once its request holds a place among those in flight: a flood of
// requests with made-up session tokens queues no more lookups than the places bound, and the rest are refused first.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/harness.js';
import { databaseTraffic } from '../support/prometheus.js';

const METRICS_TOKEN = 'mtk_session_lookups_token_0123456789';
const SHARE = 2;
const FLOOD = 60;
let service: TestService;
beforeAll(async () => {
  service = await startService({ TOLOV_REQUESTS_IN_FLIGHT_MAX: '4', TOLOV_REQUESTS_IN_FLIGHT_PER_CLIENT_MAX: String(SHARE), TOLOV_METRICS_TOKEN: METRICS_TOKEN });
});

/** Opens connections beforehand (the pool closes idle ones): a new one's own statement (is it the primary?) would count. */
const warmPool = () => Promise.all(Array.from({ length: 4 }, () => service.db.query('SELECT pg_sleep(0.05)')));
afterAll(() => service.stop());

const statements = async () => (await databaseTraffic(service, METRICS_TOKEN)).statements;

describe.each([
  ['the dashboard', '/dashboard', 'tolov_session'],
  ['the operator console', '/operator', 'tolov_operator'],
])('%s under requests with made-up session tokens', (_surface, path, cookie) => {
  it('looks up only the sessions of requests that hold a place, and refuses the others before any lookup', async () => {
    await warmPool();
    const before = await statements();
    const replies = await Promise.all(
      Array.from({ length: FLOOD }, () => service.call({ method: 'GET', url: path, headers: { cookie: `${cookie}=${randomBytes(32).toString('base64url')}` } })),
    );
    // A scrape reads the counts before it sends its own statement (the queues' depths): the one before is counted here.
    const looked = (await statements()) - before - 1;
    const refused = replies.filter((reply) => reply.status === 429).length;
    // Every request is either refused for its client's share, or served as signed out (sent to sign in).
    expect(replies.filter((reply) => reply.status !== 429 && (reply.status !== 303 || !String(reply.headers.location).includes('login')))).toEqual([]);
    expect(refused).toBeGreaterThan(0);
    // One statement per lookup, for the requests that were let in only.
    expect(looked).toBe(FLOOD - refused);
  });
});
