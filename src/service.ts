import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { openDb, type Db } from './db/db.js';
import { migrate } from './db/migrate.js';
import { buildApp } from './http/app.js';
import { createRails } from './rails/index.js';
import { idempotencyCleanup } from './workers/idempotency-cleanup.js';
import { startWorkers, type RunningWorkers } from './workers/loop.js';
import { sessionExpiry } from './workers/session-expiry.js';

export interface Service {
  app: FastifyInstance;
  db: Db;
  /** Listens on config.host:config.port and starts the workers; returns the URL. */
  listen(): Promise<string>;
  /** Stops accepting, finishes requests in flight, stops workers, closes the database. */
  stop(): Promise<void>;
}

/** Opens the database (or takes one), migrates it and builds the app; nothing listens or runs until `listen`. */
export async function createService(config: Config, options: { db?: Db } = {}): Promise<Service> {
  const db = options.db ?? (await openDb(config));
  await migrate(db);
  const app = await buildApp({ config, db, rails: createRails(db) });
  let workers: RunningWorkers | null = null;
  return {
    app,
    db,
    async listen() {
      const url = await app.listen({ port: config.port, host: config.host });
      workers = startWorkers([idempotencyCleanup(db), sessionExpiry(db, config.expiryIntervalMs)], app.log);
      return url;
    },
    async stop() {
      await app.close();
      await workers?.stop();
      await db.close();
    },
  };
}
