import { ConfigError, loadConfig, type Config } from './config.js';
import { FolderInUseError } from './db/folder-lock.js';
import { NoPrimaryError } from './db/primary.js';
import { MigrationError } from './db/migrate.js';
import { databaseHosts, hostOf } from './lib/database-url.js';
import { SealingError } from './lib/sealing.js';
import { createService, type Service } from './service.js';

function describeStorage(config: Config): string {
  if (config.databaseUrl) return `PostgreSQL at ${databaseHosts(config.databaseUrl)!.map(hostOf).join(', ')}`;
  return `embedded PostgreSQL (PGlite) in ${config.dataDir}`;
}

async function main(): Promise<void> {
  let config: Config;
  let service: Service;
  try {
    config = loadConfig();
    service = await createService(config);
  } catch (error) {
    // What the operator can fix is said in one line; anything else is a defect and keeps its stack.
    if (error instanceof ConfigError || error instanceof FolderInUseError || error instanceof SealingError || error instanceof NoPrimaryError || error instanceof MigrationError) {
      process.stderr.write(`tolov: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const log = service.app.log;
  // Nothing in this process can bring a lost database back; a new process recovers it (the embedded engine's data
  // folder as after a crash). Requests in flight fail, and their clients retry them under the same idempotency keys.
  void service.db.lost.then((error) => {
    log.fatal({ err: error }, 'the database is lost: exiting so that a restart recovers it');
    process.exit(1);
  });
  const url = await service.listen();
  log.info(`Tolov is running at ${url} on ${describeStorage(config)}`);
  if (!config.databaseUrl) {
    log.warn('The embedded database survives a process crash but not a power loss: set DATABASE_URL for real money.');
  }
  if (config.liveRailUrl !== null && config.liveFiscalUrl === null) {
    log.warn('Live mode has a bank gateway but no fiscal gateway (TOLOV_LIVE_FISCAL_URL): live receipts stay PENDING and fail after the retry schedule.');
  }
  if (config.adminToken === null) log.info('Operator API disabled: set TOLOV_ADMIN_TOKEN to create products and keys.');
  process.stdout.write(`Tolov listening on ${url}\n`);

  let stopping = false;
  const stop = (signal: string) => {
    // A second signal changes nothing: the stop under way, and its limit, count from the first.
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: finishing requests in flight, then stopping`);
    let step = 'the drain';
    // Whatever keeps the stop waiting (a request that never ends, an unanswered webhook), the process ends before
    // whoever stops it kills it. The timer only bounds the stop: it never keeps the process alive by itself.
    setTimeout(() => {
      log.error(`the stop did not finish within TOLOV_SHUTDOWN_TIMEOUT_MS (${config.shutdownTimeoutMs} ms): still waiting for ${step}; exiting`);
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    service.stop((name) => (step = name)).then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

await main();
