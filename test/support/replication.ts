// A PostgreSQL primary and a synchronous streaming standby of it, built from the Debian packages on the machine: two
// clusters in a temporary folder, on two free ports, run as the postgres user when the tests run as root (the server
// refuses to run as root). `remove` stops both and deletes the folder.
import { execFile } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
const STEP_TIMEOUT_MS = 120_000;
const SYNC_WAIT_MS = 30_000;

/** The server binaries of the installed PostgreSQL, or null when there are none. */
export function serverBinaries(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const [version] = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return version && existsSync(join(root, version, 'bin', 'pg_ctl')) ? join(root, version, 'bin') : null;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface Replicated {
  primaryPort: number;
  standbyPort: number;
  /** `postgres://postgres@127.0.0.1:<port>/<database>` on one or several ports, in the order given. */
  url(database: string, ports: number[]): string;
  /** The primary's server stops at once, as in a crash: no checkpoint, connections cut. */
  killPrimary(): Promise<void>;
  /** The standby becomes a primary and accepts writes (waits until it does). */
  promoteStandby(): Promise<void>;
  remove(): Promise<void>;
}

export async function startReplicated(): Promise<Replicated> {
  const bin = serverBinaries();
  if (bin === null) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
  const asRoot = process.getuid?.() === 0;
  const tool = (name: string, args: string[]) =>
    run(asRoot ? 'runuser' : join(bin, name), asRoot ? ['-u', 'postgres', '--', join(bin, name), ...args] : args, { timeout: STEP_TIMEOUT_MS });
  const folder = mkdtempSync(join(tmpdir(), 'tolov-replication-'));
  if (asRoot) chownSync(folder, Number((await run('id', ['-u', 'postgres'])).stdout.trim()), 0);
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const primaryDir = join(folder, 'primary');
  const standbyDir = join(folder, 'standby');
  const settings = (port: number, extra: string[]) =>
    [`port = ${port}`, "listen_addresses = '127.0.0.1'", `unix_socket_directories = '${folder}'`, 'fsync = off', 'max_connections = 50', ...extra].join('\n') + '\n';
  const start = (dir: string) => tool('pg_ctl', ['start', '-w', '-D', dir, '-l', join(dir, 'server.log')]);
  const stop = (dir: string) => tool('pg_ctl', ['stop', '-m', 'immediate', '-D', dir]).catch(() => {});

  try {
    await tool('initdb', ['-D', primaryDir, '--auth=trust', '-U', 'postgres', '--no-sync']);
    // Every commit waits until the standby has it on disk: an acknowledged payment survives losing the primary.
    appendFileSync(primaryDir + '/postgresql.conf', settings(primaryPort, ['wal_level = replica', 'max_wal_senders = 4', "synchronous_standby_names = '*'"]));
    await start(primaryDir);
    await tool('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', standbyDir, '-R', '-X', 'stream', '--no-sync']);
    // Promoted, the standby must not wait for a standby of its own.
    appendFileSync(standbyDir + '/postgresql.conf', settings(standbyPort, ["synchronous_standby_names = ''"]));
    await start(standbyDir);
    await waitForSync(primaryPort);
  } catch (error) {
    await stop(standbyDir);
    await stop(primaryDir);
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }

  const url = (database: string, ports: number[]) => `postgres://postgres@${ports.map((port) => `127.0.0.1:${port}`).join(',')}/${database}`;
  return {
    primaryPort,
    standbyPort,
    url,
    killPrimary: async () => {
      await tool('pg_ctl', ['stop', '-m', 'immediate', '-D', primaryDir]);
    },
    promoteStandby: async () => {
      await tool('pg_ctl', ['promote', '-w', '-D', standbyDir]);
    },
    remove: async () => {
      await stop(standbyDir);
      await stop(primaryDir);
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** Until the primary reports its standby synchronous: before that, commits would not wait for it. */
async function waitForSync(port: number): Promise<void> {
  const deadline = Date.now() + SYNC_WAIT_MS;
  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  await client.connect();
  try {
    while (Date.now() < deadline) {
      const { rows } = await client.query<{ sync: number }>("SELECT count(*)::int AS sync FROM pg_stat_replication WHERE sync_state = 'sync' AND state = 'streaming'");
      if (rows[0]!.sync > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the standby did not become synchronous within ${SYNC_WAIT_MS} ms`);
  } finally {
    await client.end();
  }
}
