// Drives the API through every operation and records what it answered: the examples of the API reference. Run by
// scripts/record-api-examples.ts (which writes them to src/http/openapi-examples.json) and by
// test/platform/api-examples.test.ts (which fails when the committed ones no longer match what the API answers).
import { createServer } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../src/db/types.js';
import type { RecordedExamples } from '../../src/http/openapi.js';
import type { ReceiptsService } from '../../src/modules/receipts/service.js';
import type { WebhooksService } from '../../src/modules/webhooks/service.js';
import { Probes } from './probes.js';
import { receiptsAreFiscalized } from './receipts.js';
import { balanceMovesAreListed, payoutAccountIsSet, payoutsAreMade } from './payouts.js';
import { activationIsReviewed } from './activations.js';
import { operatorsAreMade } from './operators.js';
import { paymentLinksAreShared } from './payment-links.js';
import type { Mailbox } from '../../test/support/mailbox.js';
import { Recorder } from './recorder.js';
import { buyerPaysOnThePage, cardsAreCharged, cardsAreSaved, databaseFails, liveModeHasNoRail, operatorReads, operatorSetsUp, ordersAreMade, webhooksAreSet } from './scenarios.js';

/** The service's settings for a recording, besides its database, operator token and secrets key. */
export const RECORDING_ENV = {
  TOLOV_CHECKOUT_URL: 'https://api.tolov.example',
  // The deliveries recorded go to a receiver on this machine.
  TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true',
} as const;

export interface RecordingTarget {
  app: FastifyInstance;
  db: Db;
  webhooks: WebhooksService;
  /** Its fiscalization worker's batch, run when the story wants its receipts registered. */
  receipts: Pick<ReceiptsService, 'fiscalizeDue'>;
  /** Where the service's mail goes (TOLOV_SMTP_URL): a dashboard owner's sign-up link arrives there. */
  mailbox: Mailbox;
  adminToken: string;
}

/** A webhook receiver on 127.0.0.1 that acknowledges every delivery. */
async function startReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/webhooks/tolov`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Test keys of two more products, each without one of the scopes. */
async function limitedKeys(s: Recorder): Promise<string[]> {
  const made = [
    await s.admin('POST', '/admin/v1/products', { name: 'Bukhara Books', scopes: ['sale_of_goods'] }),
    await s.admin('POST', '/admin/v1/products', { name: 'Tashkent Fitness', scopes: ['subscribe'] }),
  ];
  return made.map((reply) => Recorder.expect(reply, 201, 'limited product').body.keys.test as string);
}

/** The examples by operation and code in name order, so that a new recording differs from the last only where the answers do. */
function sorted(examples: RecordedExamples): RecordedExamples {
  const byName = <T>(map: Record<string, T>) => Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : 1)));
  return {
    operations: byName(examples.operations),
    errors: byName(Object.fromEntries(Object.entries(examples.errors).map(([operationId, codes]) => [operationId, byName(codes)]))),
    events: byName(examples.events),
  };
}

/** The operations' examples: the story of scenarios.ts, then the probes of every operation. */
export async function recordApiExamples(target: RecordingTarget): Promise<RecordedExamples> {
  const described = await target.app.inject({ method: 'GET', url: '/admin/v1/openapi.json', headers: { authorization: `Bearer ${target.adminToken}` } });
  const s = new Recorder(target.app, target.db, target.adminToken, described.json());
  const receiver = await startReceiver();
  try {
    const shop = await operatorSetsUp(s);
    const limited = await limitedKeys(s);
    const orderReceipt = await ordersAreMade(s, shop);
    await buyerPaysOnThePage(s, shop);
    await paymentLinksAreShared(s, shop);
    const cards = await cardsAreSaved(s, shop);
    const charge = await cardsAreCharged(s, shop, cards);
    await receiptsAreFiscalized(s, shop, target.receipts, { orderReceipt, charge, card: cards.card });
    await liveModeHasNoRail(s, shop);
    await webhooksAreSet(s, shop, target, receiver.url);
    await balanceMovesAreListed(s, shop);
    const owner = await payoutAccountIsSet(s, target);
    await payoutsAreMade(s, owner);
    await activationIsReviewed(s, owner);
    await operatorReads(s, shop, cards.card);
    await operatorsAreMade(s, charge);
    await databaseFails(s, shop);
    await new Probes(s, { test: shop.test, limited }).run();
  } finally {
    await receiver.close();
  }
  return sorted(s.examples);
}
