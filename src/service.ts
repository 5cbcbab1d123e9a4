import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { openDb, type Db } from './db/db.js';
import { migrate } from './db/migrate.js';
import { buildApp } from './http/app.js';
import { releaseAllLocks, type PhaseHooks } from './http/idempotency.js';
import type { PaymentsService } from './modules/payments/service.js';
import type { RefundsService } from './modules/refunds/service.js';
import type { OrdersService } from './modules/orders/service.js';
import type { Lookup } from './modules/webhooks/sender.js';
import type { WebhooksService } from './modules/webhooks/service.js';
import { maintenanceNeeded, tableMaintenance } from './workers/table-maintenance.js';
import { eventRetention } from './workers/event-retention.js';
import { webhookDelivery } from './workers/webhook-delivery.js';
import { createRails } from './rails/index.js';
import { idempotencyCleanup } from './workers/idempotency-cleanup.js';
import { startWorkers, type RunningWorkers } from './workers/loop.js';
import { reconciler } from './workers/reconciler.js';
import { expiry } from './workers/expiry.js';
import { settlement } from './workers/settlement.js';

export interface Service {
  app: FastifyInstance;
  db: Db;
  orders: OrdersService;
  payments: PaymentsService;
  refunds: RefundsService;
  webhooks: WebhooksService;
  /** Listens on config.host:config.port and starts the workers; returns the URL. */
  listen(): Promise<string>;
  /** Stops accepting, finishes requests in flight, stops workers, closes the database. */
  stop(): Promise<void>;
}

/** Opens the database (or takes one), migrates it and builds the app; nothing listens or runs until `listen`. */
export async function createService(config: Config, options: { db?: Db; hooks?: PhaseHooks; lookup?: Lookup } = {}): Promise<Service> {
  const db = options.db ?? (await openDb(config));
  await migrate(db);
  // The embedded engine's data folder is one process's: a key still locked was locked by a request of one that died
  // (killed mid-request), and its client may resume it at once. Processes sharing PostgreSQL wait for the lock to lapse.
  if (db.engine === 'pglite') await releaseAllLocks(db);
  const rails = createRails(db, config);
  const { app, services } = await buildApp({
    config,
    db,
    rails,
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.lookup ? { lookup: options.lookup } : {}),
  });
  const { orders, payments, refunds, webhooks } = services;
  let workers: RunningWorkers | null = null;
  return {
    app,
    db,
    orders,
    payments,
    refunds,
    webhooks,
    async listen() {
      const maintained = await maintenanceNeeded(db);
      if (maintained && db.engine === 'postgres') app.log.warn('autovacuum is off on this PostgreSQL server: Tolov analyses and vacuums its tables itself');
      const url = await app.listen({ port: config.port, host: config.host });
      workers = startWorkers(
        [
          idempotencyCleanup(db),
          expiry(db, orders, config.expiryIntervalMs),
          reconciler(payments, refunds, config.reconcileIntervalMs),
          settlement(payments, config.settlementDelaySeconds),
          webhookDelivery(webhooks, app.log),
          eventRetention(webhooks),
          ...(maintained ? [tableMaintenance(db)] : []),
        ],
        app.log,
      );
      return url;
    },
    async stop() {
      await app.close();
      await workers?.stop();
      // Attempts started by the delivery worker end within their timeout, and are recorded before the database closes.
      await webhooks.idle();
      await db.close();
    },
  };
}
