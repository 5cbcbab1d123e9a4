import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { ConfigError, SECRETS_KEY_EXPECTED, type Config } from './config.js';
import { openDb } from './db/db.js';
import type { Db } from './db/types.js';
import { migrate, readMigrations, schemaVersion } from './db/migrate.js';
import { countOutcomes, createMetrics, measureRequests } from './http/metrics.js';
import { operationsRoutes } from './http/routes/operations.js';
import { registerApi, type Services } from './http/app.js';
import { IdempotentReplies } from './http/idempotency.js';
import type { RequestsInFlight } from './http/in-flight.js';
import { createServer, stopListening } from './http/server.js';
import type { PhaseHooks } from './core/idempotency.js';
import { releaseAllLocks } from './core/idempotency-keys.js';
import { Commands } from './core/commands.js';
import { CardBindingsService } from './modules/card-bindings/service.js';
import { CardsService } from './modules/cards/service.js';
import { CheckoutSessions } from './modules/checkout/sessions.js';
import { CheckoutService } from './modules/checkout/service.js';
import { LedgerService } from './modules/ledger/service.js';
import { OrdersService } from './modules/orders/service.js';
import { PaymentsService } from './modules/payments/service.js';
import { ApiKeyCache } from './modules/products/key-cache.js';
import { ProductsService } from './modules/products/service.js';
import { ReconciliationService } from './modules/reconciliation/service.js';
import { ChecksService } from './modules/checks/service.js';
import { OperatorActions } from './modules/operators/actions.js';
import { OperatorsService } from './modules/operators/service.js';
import { SupportService } from './modules/support/service.js';
import { ActivationsService } from './modules/activations/service.js';
import { RefundsService } from './modules/refunds/service.js';
import { HoldsService } from './modules/holds/service.js';
import { ReceiptsService } from './modules/receipts/service.js';
import { PayoutsService } from './modules/payouts/service.js';
import { PaymentLinksService } from './modules/payment-links/service.js';
import { createSender, type Lookup, type Sender } from './modules/webhooks/sender.js';
import { WebhooksService } from './modules/webhooks/service.js';
import { EventStreams } from './modules/webhooks/stream.js';
import { RequestLog } from './modules/request-log/service.js';
import { measuredFiscalModules, measuredRails, type Outcomes } from './modules/monitoring/outcomes.js';
import { PaymentActivity } from './modules/payments/activity.js';
import { requestLogWriter } from './workers/request-log.js';
import { AccountsService } from './modules/accounts/service.js';
import { AccountLinks } from './modules/accounts/links.js';
import { AccountMailer } from './modules/accounts/mailer.js';
import { Throttles } from './modules/throttles/service.js';
import { Mail } from './modules/mail/service.js';
import { logTransport, smtpTransport } from './modules/mail/transport.js';
import { mailDelivery } from './workers/mail-delivery.js';
import { TestHelpersService } from './modules/test-helpers/service.js';
import { keyFromFile, Sealer } from './lib/sealing.js';
import { accountCleanup } from './workers/account-cleanup.js';
import { maintenanceNeeded, tableMaintenance } from './workers/table-maintenance.js';
import { eventRetention } from './workers/event-retention.js';
import { webhookDelivery } from './workers/webhook-delivery.js';
import { createFiscalModules, createRails, type Rails } from './rails/index.js';
import { Timings } from './lib/timings.js';
import { idempotencyCleanup } from './workers/idempotency-cleanup.js';
import { startWorkers, type RunningWorkers, type Worker } from './workers/loop.js';
import { reconciler } from './workers/reconciler.js';
import { expiry } from './workers/expiry.js';
import { holdExpiry } from './workers/hold-expiry.js';
import { settlement } from './workers/settlement.js';
import { fiscalization } from './workers/fiscalization.js';
import { payouts as payoutSchedule } from './workers/payouts.js';

export interface Service {
  app: FastifyInstance;
  db: Db;
  orders: OrdersService;
  payments: PaymentsService;
  holds: HoldsService;
  refunds: RefundsService;
  receipts: ReceiptsService;
  payouts: PayoutsService;
  paymentLinks: PaymentLinksService;
  bindings: CardBindingsService;
  webhooks: WebhooksService;
  /** Listens on config.host:config.port and starts the workers; returns the URL. */
  listen(): Promise<string>;
  /** Stops accepting, finishes requests in flight, stops workers, closes the database; names each step to `step`. */
  stop(step?: (name: string) => void): Promise<void>;
}

/** Every capability's service, each given what it depends on. */
function buildServices(parts: {
  config: Config;
  db: Db;
  rails: Rails;
  keys: ApiKeyCache;
  sender: Sender;
  sealer: Sealer;
  log: FastifyBaseLogger;
  timings: Timings;
  mail: Mail;
  outcomes: Outcomes;
}): Services {
  const { config, db, rails, keys, sender, sealer, log, timings, mail, outcomes } = parts;
  const throttles = new Throttles(db);
  const mailer = new AccountMailer(mail, config.checkoutUrl);
  const accounts = new AccountsService(db, sealer, throttles, mailer);
  // Every capability's commands run here: once per idempotency key, audited in the change's transaction.
  const commands = new Commands(db, accounts, sealer);
  const webhooks = new WebhooksService(db, config, sender, sealer, commands, outcomes);
  const ledger = new LedgerService(db, config.settlementDelaySeconds);
  const cards = new CardsService(db);
  const sessions = new CheckoutSessions(db);
  const fiscal = measuredFiscalModules(createFiscalModules(db, config), outcomes);
  const receiptSettings = { checkoutUrl: config.checkoutUrl, vatRates: config.vatRates, retryScheduleSeconds: config.webhookRetryScheduleSeconds };
  const receipts = new ReceiptsService(db, fiscal, webhooks, receiptSettings, log);
  const orders = new OrdersService(db, config, sessions, cards, webhooks, receipts, commands);
  const payments = new PaymentsService(db, rails, orders, cards, ledger, webhooks, receipts, commands, log, outcomes);
  const refunds = new RefundsService(db, rails, payments, ledger, receipts, commands, log, outcomes);
  const holds = new HoldsService(db, rails, payments, receipts, commands, log, config.holdDays);
  const products = new ProductsService(db, keys, config.defaultFeeBps, commands);
  const paymentLinks = new PaymentLinksService(db, config, orders, receipts, products, commands);
  const bindings = new CardBindingsService(db, rails, sessions, commands, config);
  const payouts = new PayoutsService(db, rails, ledger, webhooks, commands, { timeMinutes: config.payoutTimeMinutes, minimum: config.payoutMin }, log);
  const checkout = new CheckoutService(db, rails, payments, orders, cards, bindings, receipts);
  const reconciliation = new ReconciliationService(db, rails, fiscal);
  const activations = new ActivationsService(db, products, payouts, commands);
  const operators = new OperatorsService(db, accounts, mailer);
  return {
    accounts,
    accountLinks: new AccountLinks(db, accounts, products, throttles, mailer),
    products,
    orders,
    paymentLinks,
    payments,
    holds,
    refunds,
    receipts,
    payouts,
    cards,
    bindings,
    checkout,
    testHelpers: new TestHelpersService(orders, bindings, checkout, payouts, payments, ledger, holds),
    ledger,
    webhooks,
    eventStreams: new EventStreams(db, ledger),
    requestLog: new RequestLog(db),
    activity: new PaymentActivity(db),
    reconciliation,
    checks: new ChecksService(db, reconciliation),
    activations,
    operators,
    operatorActions: new OperatorActions(operators, products, activations),
    support: new SupportService(db, operators),
    timings,
    mail,
  };
}

/** The jobs every process runs beside the API, each in its own loop. */
function backgroundWorkers(config: Config, db: Db, services: Services, log: FastifyBaseLogger): Worker[] {
  const { orders, bindings, payments, holds, refunds, payouts, receipts, webhooks, accounts, mail, requestLog } = services;
  return [
    idempotencyCleanup(db),
    expiry(orders, bindings, config.expiryIntervalMs),
    holdExpiry(holds, config.expiryIntervalMs),
    reconciler(payments, holds, refunds, payouts, config.reconcileIntervalMs),
    payoutSchedule(payouts),
    settlement(payments, config.settlementDelaySeconds),
    fiscalization(receipts),
    webhookDelivery(webhooks, log),
    eventRetention(webhooks),
    accountCleanup(accounts),
    mailDelivery(mail),
    requestLogWriter(requestLog),
  ];
}

/** Whether the process serves: its workers run, and it is not stopping. */
interface Running {
  workers: RunningWorkers | null;
  stopping: boolean;
}

/** How long readiness waits for the database before it names it as what fails. */
const READINESS_DB_TIMEOUT_MS = 2_000;

/** The database's schema version, or 'database' when it does not answer within READINESS_DB_TIMEOUT_MS. */
async function schemaVersionWithin(db: Db): Promise<number | 'database'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error('timeout')), READINESS_DB_TIMEOUT_MS)));
  try {
    return await Promise.race([schemaVersion(db), timeout]);
  } catch {
    return 'database';
  } finally {
    clearTimeout(timer);
  }
}

/** What keeps the process from serving now: the database not answering or behind the code, no workers, a stop begun. */
async function readinessOf(version: () => Promise<number | 'database'>, latestMigration: number, running: Running): Promise<string[]> {
  const known = await version();
  // Read after the database answered: a stop may have begun meanwhile, and the answer may be another probe's.
  return [
    ...(running.stopping ? ['stopping'] : []),
    ...(running.workers === null ? ['workers'] : []),
    ...(known === 'database' ? ['database'] : known < latestMigration ? ['migrations'] : []),
  ];
}

/**
 * Calls of `check` made while one runs share its answer. /readyz is public and never refused for load: however many
 * probes arrive at once, the database answers one schema-version query at a time.
 */
function sharedWhileRunning<T>(check: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | null = null;
  return () => (running ??= check().finally(() => (running = null)));
}

/** Readiness and metrics: every request measured from the first, /readyz and /metrics answered; the outcome counts. */
async function monitor(app: FastifyInstance, db: Db, config: Config, running: Running, inFlight: RequestsInFlight): Promise<Outcomes> {
  const metrics = createMetrics(db, inFlight);
  measureRequests(app, metrics);
  const latestMigration = (await readMigrations()).length;
  const version = sharedWhileRunning(() => schemaVersionWithin(db));
  await app.register(operationsRoutes, { readiness: () => readinessOf(version, latestMigration, running), metrics, metricsToken: config.metricsToken });
  return countOutcomes(metrics);
}

/**
 * The sealer of stored secrets: TOLOV_SECRETS_KEY, or on the embedded engine a key kept in a file beside the data
 * folder (made at the first start, readable by its user alone); an in-memory database gets a key of its own.
 */
async function openSealer(config: Config): Promise<Sealer> {
  if (config.secretsKey !== null) return new Sealer(config.secretsKey, config.previousSecretsKeys);
  if (config.databaseUrl !== null) {
    throw new ConfigError('TOLOV_SECRETS_KEY', `${SECRETS_KEY_EXPECTED}, the same in every process, whenever DATABASE_URL is set`, '');
  }
  const key = config.dataDir === 'memory://' ? randomBytes(32) : await keyFromFile(`${config.dataDir.replace(/\/+$/, '')}.secrets-key`);
  return new Sealer(key, config.previousSecretsKeys);
}

/** Opens the database (or takes one), migrates it and builds the app; nothing listens or runs until `listen`. */
export async function createService(config: Config, options: { db?: Db; hooks?: PhaseHooks; lookup?: Lookup } = {}): Promise<Service> {
  const db = options.db ?? (await openDb(config));
  await migrate(db);
  // The embedded engine's data folder is one process's: a key still locked was locked by a request of one that died
  // (killed mid-request), and its client may resume it at once. Processes sharing PostgreSQL wait for the lock to lapse.
  if (db.engine === 'pglite') await releaseAllLocks(db);
  const timings = new Timings();
  const { cache: keys, stop: stopFollowingKeys } = await ApiKeyCache.start(db);
  const { app, inFlight } = await createServer(config, keys);
  const running: Running = { workers: null, stopping: false };
  const outcomes = await monitor(app, db, config, running, inFlight);
  const rails = measuredRails(createRails(db, config, timings), outcomes);
  app.addHook('onClose', () => stopFollowingKeys());
  app.addHook('onClose', () => timings.stop());
  const sender = createSender({ timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate, ...(options.lookup ? { lookup: options.lookup } : {}) });
  app.addHook('onClose', () => sender.close());
  const sealer = await openSealer(config);
  const mail = new Mail(db, sealer, config.smtpUrl === null ? logTransport(app.log) : smtpTransport(config.smtpUrl, config.mailFrom), app.log);
  const services = buildServices({ config, db, rails, keys, sender, sealer, log: app.log, timings, mail, outcomes });
  const sealed = (await services.webhooks.sealStoredSecrets()) + (await services.accounts.sealStoredSeeds());
  if (sealed > 0) app.log.info(`sealed ${sealed} stored secrets (webhook signing secrets, TOTP seeds) under the current TOLOV_SECRETS_KEY`);
  await services.eventStreams.start();
  // Open streams end before the server waits for its connections to close.
  app.addHook('preClose', () => services.eventStreams.stop());
  const idempotent = new IdempotentReplies(timings, options.hooks);
  await registerApi(app, { services, idempotent, checkoutLimits: config, publicUrl: config.checkoutUrl });
  const { orders, payments, holds, refunds, receipts, bindings, webhooks, requestLog, payouts, paymentLinks } = services;
  return {
    app,
    db,
    orders,
    payments,
    holds,
    refunds,
    receipts,
    payouts,
    paymentLinks,
    bindings,
    webhooks,
    async listen() {
      const maintained = await maintenanceNeeded(db);
      if (maintained && db.engine === 'postgres') app.log.warn('autovacuum is off on this PostgreSQL server: Tolov analyses and vacuums its tables itself');
      const url = await app.listen({ port: config.port, host: config.host });
      running.workers = startWorkers([...backgroundWorkers(config, db, services, app.log), ...(maintained ? [tableMaintenance(db)] : [])], app.log);
      return url;
    },
    async stop(step = () => {}) {
      running.stopping = true;
      step('the drain');
      // Readiness fails from now on; the load balancer takes the process out before its listener closes.
      if (config.shutdownDrainMs > 0) await new Promise((resolve) => setTimeout(resolve, config.shutdownDrainMs));
      // The server's close also closes the webhook sender, which lets the attempts under way end first.
      step('requests in flight and webhook attempts under way');
      await stopListening(app);
      await app.close();
      step("the workers' batches");
      await running.workers?.stop();
      step('webhook deliveries and mail');
      // Attempts started by the delivery worker end within their timeout, and are recorded before the database closes.
      await webhooks.idle();
      await mail.idle();
      mail.close();
      step('the request log and the database');
      // The calls answered last are in the log too.
      await requestLog.flush(Number.MAX_SAFE_INTEGER).catch((error: unknown) => app.log.warn({ err: error }, 'the request log could not be written'));
      await db.close();
    },
  };
}
