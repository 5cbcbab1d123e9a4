// Benchmark scenario: one product's webhook endpoints black-holed (they accept connections and never answer), and
// another product's delivery latency, from its event's creation to its arrival, against the same product alone.
import { createServer, type Server } from 'node:http';
import type { Db } from '../src/db/types.js';
import { loadConfig } from '../src/config.js';
import { createService } from '../src/service.js';
import { startWorkers } from '../src/workers/loop.js';
import { webhookDelivery } from '../src/workers/webhook-delivery.js';

const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');
/** Charges a second per product, each an event; the noisy product's go to all its 16 endpoints. */
const EVENTS_PER_SECOND = 20;
const ENDPOINTS_BLACK_HOLED = 16;
const ARRIVALS_WAIT_MS = 60_000;

export interface Latencies {
  delivered: number;
  p50Ms: number;
  p99Ms: number;
}

const listen = (server: Server) =>
  new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`)));

/** The quiet product's delivery latencies alone, then beside the noisy product, `seconds` each. */
export async function benchWebhookFairness(db: Db, seconds: number): Promise<{ quiet: Latencies; beside: Latencies }> {
  const arrivals: number[] = [];
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      arrivals.push(Date.now() - Date.parse((JSON.parse(body) as { created: string }).created));
      response.writeHead(200).end();
    });
  });
  const blackHole = createServer(() => {});
  const [receiverUrl, blackHoleUrl] = [await listen(receiver), await listen(blackHole)];
  const config = loadConfig({ TOLOV_ADMIN_TOKEN: ADMIN_TOKEN, TOLOV_SECRETS_KEY: SECRETS_KEY, LOG_LEVEL: 'silent', TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
  const service = await createService(config, { db });
  const workers = startWorkers([webhookDelivery(service.webhooks, service.app.log)], service.app.log);
  try {
    const quiet = await benchProduct(service, [`${receiverUrl}/quiet`]);
    const noisy = await benchProduct(service, Array.from({ length: ENDPOINTS_BLACK_HOLED }, (_, n) => `${blackHoleUrl}/dead/${n}`));
    const measure = async (products: Array<() => Promise<void>>): Promise<Latencies> => {
      arrivals.length = 0;
      let sent = 0;
      const deadline = Date.now() + seconds * 1000;
      while (Date.now() < deadline) {
        await Promise.all([...products.map((charge) => charge()), new Promise((resolve) => setTimeout(resolve, 1000 / EVENTS_PER_SECOND))]);
        sent += 1;
      }
      // Every quiet event is waited for (a minute at most), so that a late one counts with its lateness.
      const waitUntil = Date.now() + ARRIVALS_WAIT_MS;
      while (arrivals.length < sent && Date.now() < waitUntil) await new Promise((resolve) => setTimeout(resolve, 50));
      const sorted = [...arrivals].sort((a, b) => a - b);
      const at = (q: number) => (sorted.length < sent ? Infinity : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
      return { delivered: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99) };
    };
    const alone = await measure([quiet]);
    const beside = await measure([quiet, noisy]);
    return { quiet: alone, beside };
  } finally {
    await workers.stop();
    blackHole.closeAllConnections();
    await service.webhooks.idle();
    await service.app.close();
    receiver.close();
    blackHole.close();
  }
}

/** A product with these webhook endpoints and a bound test card; answers a function that charges it once. */
async function benchProduct(service: Awaited<ReturnType<typeof createService>>, urls: string[]): Promise<() => Promise<void>> {
  const call = async (method: 'GET' | 'POST', url: string, body: unknown, authorization: string) =>
    (await service.app.inject({ method, url, headers: { authorization, 'content-type': 'application/json' }, payload: JSON.stringify(body) })).json();
  const product = await call('POST', '/admin/v1/products', { name: 'Fairness shop' }, `Bearer ${ADMIN_TOKEN}`);
  const key = `Bearer ${product.keys.test}`;
  for (const url of urls) await call('POST', '/v1/webhook_endpoints', { url }, key);
  const binding = await call('POST', '/subscribe/v1/card_bindings', {}, key);
  await call('POST', `/checkout/v1/sessions/${binding.clientToken}/card`, { pan: '8600000000000007', expiry: '12/30', phone: '998901234567' }, '');
  await call('POST', `/checkout/v1/sessions/${binding.clientToken}/code`, { code: '111111' }, '');
  const card = (await service.app.inject({ method: 'GET', url: `/subscribe/v1/card_bindings/${binding.id}`, headers: { authorization: key } })).json().card;
  let n = 0;
  return async () => {
    await service.app.inject({
      method: 'POST',
      url: '/subscribe/v1/charges',
      headers: { authorization: key, 'content-type': 'application/json', 'idempotency-key': `fair-${product.id}-${++n}` },
      payload: JSON.stringify({ amount: 10_000, card }),
    });
  };
}
