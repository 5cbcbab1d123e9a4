// DATABASE_URL may list several PostgreSQL hosts, in libpq's form (`postgres://user@h1:5432,h2:5433/db`): a primary
// and its standbys. Tolov writes, so it connects only to the one that accepts writes (`pg_is_in_recovery()` false),
// and finds it again after a failover without a restart.
import pg from 'pg';
import { DATABASE_HOSTS_MAX, databaseHosts, hostOf } from '../lib/database-url.js';

/** A connection, or a host's answer whether it accepts writes, is given up after this long. */
export const CONNECT_TIMEOUT_MS = 5_000;
/** A search for the primary starts no sooner than this after the last, however many connections fail meanwhile. */
const SEARCH_INTERVAL_MS = 250;

/** A connection reached a host that does not accept writes: a standby, or a primary since demoted. */
export class NotPrimaryError extends Error {
  readonly code = 'ENOTPRIMARY';
  constructor(host: string) {
    super(`${host} does not accept writes (it is a standby); looking for the primary`);
  }
}

/** No listed host accepts writes: each host's answer, for the operator. */
export class NoPrimaryError extends Error {
  constructor(answers: readonly string[]) {
    super(`No host of DATABASE_URL can be written to: ${answers.join('; ')}`);
  }
}

/** Whether the server behind `url` accepts writes; a host that cannot be reached throws. */
async function acceptsWrites(url: string, connectTimeoutMs: number): Promise<boolean> {
  // The question has its own limit too: a host that accepts the connection and then goes silent must not hold a search.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs, query_timeout: connectTimeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby');
    return !rows[0]!.standby;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The host new connections go to. `suspect`, called when a connection fails or meets a standby, searches again in the
 * background, one search at a time. Until a search finds the new primary, connections go to the old one and fail, as
 * they would with one host.
 */
export class Primary {
  private index = 0;
  private searching = false;
  private lastSearch = 0;
  private closed = false;

  private constructor(
    private readonly hosts: readonly string[],
    private readonly connectTimeoutMs: number,
  ) {}

  /** The primary among the hosts of a DATABASE_URL, found; throws NoPrimaryError when none accepts writes. */
  static async of(url: string, connectTimeoutMs = CONNECT_TIMEOUT_MS): Promise<Primary> {
    const hosts = databaseHosts(url);
    if (hosts === null) throw new Error(`DATABASE_URL lists an empty host, or more than ${DATABASE_HOSTS_MAX}`);
    const primary = new Primary(hosts, connectTimeoutMs);
    await primary.find();
    return primary;
  }

  /** The connection string of the primary as last found. */
  get url(): string {
    return this.hosts[this.index]!;
  }

  /**
   * Asks every host at once and takes the first that answers it accepts writes, so that a dead host's silence does not
   * delay the failover; with none, NoPrimaryError names each host's answer.
   */
  private find(): Promise<void> {
    return new Promise((resolve, reject) => {
      const answers: string[] = new Array<string>(this.hosts.length);
      let pending = this.hosts.length;
      let found = false;
      const settle = (index: number, answer: string) => {
        answers[index] = `${hostOf(this.hosts[index]!)} ${answer}`;
        if (--pending === 0) reject(new NoPrimaryError(answers));
      };
      this.hosts.forEach((url, index) => {
        acceptsWrites(url, this.connectTimeoutMs).then(
          (writable) => {
            if (!writable) return settle(index, 'is a standby');
            // Another host answering yes later (two writable: a primary not fenced) does not move the pool again.
            if (found) return;
            found = true;
            this.index = index;
            resolve();
          },
          (error: Error) => settle(index, `(${error.message})`),
        );
      });
    });
  }

  /** The pool is ending: a failure from now on is its own, not the primary's. */
  close(): void {
    this.closed = true;
  }

  suspect(): void {
    if (this.closed || this.searching || Date.now() - this.lastSearch < SEARCH_INTERVAL_MS) return;
    this.searching = true;
    this.find()
      .catch(() => {})
      .finally(() => {
        this.searching = false;
        this.lastSearch = Date.now();
      });
  }
}

