import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openPglite, openPostgres, pgliteDb } from '../../src/db/db.js';
import { afterCommit, afterRollback, isUniqueViolation, refusedAs, WRITES_WAITING_MAX, type Db, type Transaction } from '../../src/db/types.js';
import { FolderInUseError } from '../../src/db/folder-lock.js';
import { createPostgresDatabase, engine, openTestDb } from '../support/harness.js';

/** Two writes into `table` (ids `id` and `id + 1`), a read, and one more write (`id + 2`), in one transaction. */
const writesAroundRead = (db: Db, table: string, id: number) =>
  db.transaction(async (tx) => {
    const insert = `INSERT INTO ${table} VALUES ($1)`;
    tx.write(insert, [id]);
    tx.write(insert, [id + 1]);
    await tx.query(`SELECT count(*)::int AS n FROM ${table}`);
    tx.write(insert, [id + 2]);
  });

describe(`the database layer (${engine})`, () => {
  let db: Db;
  beforeAll(async () => {
    db = await openTestDb();
    await db.exec('CREATE TABLE layer_rows (id integer PRIMARY KEY, amount bigint, body bytea, doc jsonb, flag boolean, note text)');
  });
  afterAll(() => db.close());

  it('sends parameters and reads columns with the same JavaScript types on either engine', async () => {
    const rows = await db.query(
      'INSERT INTO layer_rows VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, amount, body, doc, flag, note, amount::numeric AS exact',
      [1, 9_007_199_254_740_991, Buffer.from([0, 255, 7]), { plan: 'pro', n: [1, 2] }, true, null],
    );
    expect(rows).toEqual([
      { id: 1, amount: 9_007_199_254_740_991, body: Buffer.from([0, 255, 7]), doc: { plan: 'pro', n: [1, 2] }, flag: true, note: null, exact: '9007199254740991' },
    ]);
  });

  it('sends a lone surrogate as U+FFFD and keeps surrogate pairs, on either engine', async () => {
    expect(await db.query('SELECT $1::text AS t', ['a\udc55b\u4e2d😀'])).toEqual([{ t: 'a\ufffdb\u4e2d😀' }]);
  });

  it('refuses an int8 beyond the safe integer range rather than rounding it', async () => {
    await expect(db.query("SELECT '9007199254740993'::bigint AS n")).rejects.toThrow(/outside the safe integer range/);
  });

  it('reports a failed statement with its SQLSTATE, and the next statement runs normally', async () => {
    const failed = await db.query('INSERT INTO layer_rows (id) VALUES ($1)', [1]).catch((error: unknown) => error);
    expect(isUniqueViolation(failed)).toBe(true);
    expect(await db.query('SELECT count(*)::int AS n FROM layer_rows WHERE id = $1', [1])).toEqual([{ n: 1 }]);
  });

  it('rolls a transaction back whole when its work throws, and runs the same statements afterwards', async () => {
    const insert = 'INSERT INTO layer_rows (id, note) VALUES ($1, $2)';
    await expect(
      db.transaction(async (tx) => {
        await tx.query(insert, [2, 'kept only if committed']);
        await tx.query(insert, [1, 'duplicate']);
      }),
    ).rejects.toSatisfy(isUniqueViolation);
    expect(await db.query('SELECT id FROM layer_rows WHERE id = $1', [2])).toEqual([]);
    await db.transaction((tx) => tx.query(insert, [2, 'committed']));
    expect(await db.query('SELECT note FROM layer_rows WHERE id = $1', [2])).toEqual([{ note: 'committed' }]);
  });

  it('rolls a transaction back when its first statement fails, and its connection serves the next one', async () => {
    const insert = 'INSERT INTO layer_rows (id, note) VALUES ($1, $2)';
    await db.query(insert, [40, 'there before']);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const firsts: Array<[string, unknown[], RegExp | ((error: unknown) => boolean)]> = [
      // Refused by the server, a text that does not parse (twice: it is never taken for prepared), and a parameter
      // that cannot be sent.
      [insert, [40, 'duplicate'], isUniqueViolation],
      ['INSERT INTO layer_rows (id, note) VALUE ($1, $2)', [41, 'misspelt'], /syntax error/],
      ['INSERT INTO layer_rows (id, note) VALUE ($1, $2)', [41, 'misspelt'], /syntax error/],
      ['INSERT INTO layer_rows (id, doc) VALUES ($1, $2)', [41, circular], /circular/i],
    ];
    for (const [sql, params, refusal] of firsts) {
      const failed = db.transaction(async (tx) => {
        await tx.query(sql, params);
        await tx.query(insert, [42, 'after the first']);
      });
      if (refusal instanceof RegExp) await expect(failed).rejects.toThrow(refusal);
      else await expect(failed).rejects.toSatisfy(refusal);
      expect(await db.transaction((tx) => tx.query('SELECT id FROM layer_rows WHERE id >= $1 ORDER BY id', [40]))).toEqual([{ id: 40 }]);
    }
  });

  it("runs a transaction's writes in order ahead of its next statement, or of its COMMIT; their rows are no statement's", async () => {
    const insert = 'INSERT INTO layer_rows (id, note) VALUES ($1, $2)';
    const rows = await db.transaction(async (tx) => {
      tx.write(insert, [60, 'written']);
      tx.write('UPDATE layer_rows SET note = note || $2 WHERE id = $1', [60, ', then changed']);
      // A write that answers rows: they reach nobody.
      tx.write('SELECT id, note FROM layer_rows');
      return tx.query('SELECT id, note FROM layer_rows WHERE id = $1', [60]);
    });
    expect(rows).toEqual([{ id: 60, note: 'written, then changed' }]);
    await db.transaction(async (tx) => tx.write(insert, [61, 'with the commit']));
    expect(await db.query('SELECT id, note FROM layer_rows WHERE id >= $1 ORDER BY id', [60])).toEqual([
      { id: 60, note: 'written, then changed' },
      { id: 61, note: 'with the commit' },
    ]);
  });

  it("hands a write's rows over once its transaction committed, read in the exchange of the statement after it", async () => {
    const insert = 'INSERT INTO layer_rows (id, amount, doc, note) VALUES ($1, $2, $3, $4) RETURNING id, amount, doc, note';
    const writeAndRead = (id: number) =>
      db.transaction(async (tx) => {
        let arrived = false;
        const first = tx.writeReturning(insert, [id, 9_007_199_254_740_991, { n: 1 }, 'before a read']);
        // A write whose rows nobody reads, between two that are read: each is given its own.
        tx.write('SELECT id FROM layer_rows');
        void first.then(() => (arrived = true));
        expect(await tx.query('SELECT count(*)::int AS n FROM layer_rows WHERE id = $1', [id])).toEqual([{ n: 1 }]);
        // Its rows came in that exchange, and are handed over only once the transaction commits.
        await new Promise((resolve) => setTimeout(resolve, 10));
        expect(arrived).toBe(false);
        return [first, tx.writeReturning(insert, [id + 1, 2, null, 'with the commit'])] as const;
      });
    try {
      // The first prepares the texts on the connection.
      await writeAndRead(90);
      const before = db.traffic();
      const [ahead, withCommit] = await writeAndRead(92);
      // BEGIN, the write, the unread one and the read; the second write and the COMMIT.
      const after = db.traffic();
      expect({ roundTrips: after.roundTrips - before.roundTrips, statements: after.statements - before.statements }).toEqual({ roundTrips: 2, statements: 6 });
      expect(await ahead).toEqual([{ id: 92, amount: 9_007_199_254_740_991, doc: { n: 1 }, note: 'before a read' }]);
      expect(await withCommit).toEqual([{ id: 93, amount: 2, doc: null, note: 'with the commit' }]);
      // Last before a script, which nothing may precede in its exchange: sent on its own, and read all the same.
      const [beforeScript] = await db.transaction(async (tx) => {
        const written = tx.writeReturning(insert, [96, 3, null, 'before a script']);
        await tx.exec('SELECT 1');
        return [written] as const;
      });
      expect(await beforeScript).toEqual([{ id: 96, amount: 3, doc: null, note: 'before a script' }]);
    } finally {
      await db.query('DELETE FROM layer_rows WHERE id >= 90 AND id < 100');
    }
  });

  it("commits a transaction whose write's rows cannot be parsed, and hands over the failure to parse them", async () => {
    try {
      const [written] = await db.transaction(async (tx) => [tx.writeReturning('INSERT INTO layer_rows (id, amount) VALUES ($1, $2::bigint * 4) RETURNING amount', [97, 9_007_199_254_740_991])] as const);
      await expect(written).rejects.toThrow(/outside the safe integer range/);
      expect(await db.query('SELECT id FROM layer_rows WHERE id = $1', [97])).toEqual([{ id: 97 }]);
    } finally {
      await db.query('DELETE FROM layer_rows WHERE id = $1', [97]);
    }
  });

  it("never hands over a write's rows when its transaction rolls back, and reads the failure as the work said", async () => {
    const insert = 'INSERT INTO layer_rows (id, note) VALUES ($1, $2) RETURNING id';
    let pending: Promise<unknown> = Promise.resolve();
    const failed = db.transaction(async (tx) => {
      refusedAs(tx, (error) => ((error as { code?: string }).code === '22012' ? new Error('the check refused it') : error));
      pending = tx.writeReturning(insert, [94, 'rolled back']);
      tx.write('SELECT 1 / $1::int', [0]);
    });
    await expect(failed).rejects.toThrow('the check refused it');
    const settled = await Promise.race([pending.then(() => 'settled', () => 'settled'), new Promise((resolve) => setTimeout(() => resolve('pending'), 50))]);
    expect(settled).toBe('pending');
    // A failure it does not know reaches the caller as it was.
    const other = db.transaction(async (tx) => {
      refusedAs(tx, (error) => ((error as { code?: string }).code === '22012' ? new Error('the check refused it') : error));
      tx.write(insert, [95, 'once']);
      tx.write(insert, [95, 'twice']);
    });
    await expect(other).rejects.toSatisfy(isUniqueViolation);
    expect(await db.query('SELECT id FROM layer_rows WHERE id >= 90 AND id < 100')).toEqual([]);
  });

  it('takes up to WRITES_WAITING_MAX writes between two statements, and refuses one more, rolling back', async () => {
    const insert = 'INSERT INTO layer_rows (id, note) VALUES ($1, $2)';
    // Below zero, apart from every other test's rows.
    const ids = (from: number) => Array.from({ length: WRITES_WAITING_MAX + 1 }, (_, index) => from + index);
    const count = async (from: number) =>
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM layer_rows WHERE id >= $1 AND id <= $2', [from, from + WRITES_WAITING_MAX]))[0]!.n;
    await db.transaction(async (tx) => {
      for (const id of ids(-10_000).slice(1)) tx.write(insert, [id, 'queued']);
    });
    expect(await count(-10_000)).toBe(WRITES_WAITING_MAX);
    const refused = db.transaction(async (tx) => {
      for (const id of ids(-20_000)) tx.write(insert, [id, 'queued']);
    });
    await expect(refused).rejects.toThrow(`More than ${WRITES_WAITING_MAX} writes wait in one transaction`);
    expect(await count(-20_000)).toBe(0);
  });

  it('fails the statement after a failed write, and its transaction whole; the connection serves the next one', async () => {
    const insert = 'INSERT INTO layer_rows (id, note) VALUES ($1, $2)';
    await db.query(insert, [70, 'there before']);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const ran: string[] = [];
    const failing: Array<[string, (tx: Transaction) => Promise<unknown>, RegExp | ((error: unknown) => boolean)]> = [
      ['refused, before a read', (tx) => tx.query('SELECT 1 AS one'), isUniqueViolation],
      ['refused, before the COMMIT', async () => {}, isUniqueViolation],
      // Its error swallowed by the work, which then commits: the COMMIT rolls back.
      ['refused, its error swallowed', (tx) => tx.query('SELECT 1 AS one').catch(() => []), /rolled back|aborted/i],
    ];
    for (const [name, after, refusal] of failing) {
      const failed = db.transaction(async (tx) => {
        afterRollback(tx, () => ran.push(`${name}: rolled back`));
        tx.write(insert, [71, 'before the failing write']);
        tx.write(insert, [70, 'duplicate']);
        await after(tx);
      });
      if (refusal instanceof RegExp) await expect(failed).rejects.toThrow(refusal);
      else await expect(failed).rejects.toSatisfy(refusal);
    }
    // A text that does not parse (twice: it is never taken for prepared), and a parameter that cannot be sent.
    const misspelt = 'INSERT INTO layer_rows (id, note) VALUE ($1, $2)';
    // Each the last write before the COMMIT, which is then not sent: the transaction rolled back, and says so.
    const lastWrites = [[misspelt, [71, 'misspelt'], /syntax error/], [misspelt, [71, 'misspelt'], /syntax error/], ['INSERT INTO layer_rows (id, doc) VALUES ($1, $2)', [71, circular], /circular/i]] as const;
    for (const [index, [sql, params, refusal]] of lastWrites.entries()) {
      const failed = db.transaction(async (tx) => {
        afterRollback(tx, () => ran.push(`last write ${index}: rolled back`));
        tx.write(sql, params);
      });
      await expect(failed).rejects.toThrow(refusal);
    }
    expect(ran).toEqual([...failing.map(([name]) => `${name}: rolled back`), ...lastWrites.map((_, index) => `last write ${index}: rolled back`)]);
    expect(await db.query('SELECT id FROM layer_rows WHERE id >= $1 ORDER BY id', [70])).toEqual([{ id: 70 }]);
    await db.transaction(async (tx) => tx.write(insert, [71, 'committed']));
    expect(await db.query('SELECT id FROM layer_rows WHERE id >= $1 ORDER BY id', [70])).toEqual([{ id: 70 }, { id: 71 }]);
  });

  it('runs one statement of a transaction at a time: a second sent before the first is answered fails it, and it rolls back whole', async () => {
    const insert = 'INSERT INTO layer_rows (id, note) VALUES ($1, $2)';
    const failed = db.transaction(async (tx) => {
      tx.write(insert, [90, 'ahead of both']);
      const first = tx.query(insert, [91, 'first']);
      const second = tx.query(insert, [92, 'second, sent too soon']);
      await expect(second).rejects.toThrow('A transaction runs one statement at a time');
      await first;
    });
    await expect(failed).rejects.toThrow(/rolled back|aborted/i);
    expect(await db.query('SELECT id FROM layer_rows WHERE id >= $1 AND id < $2', [90, 100])).toEqual([]);
  });

  it('rolls back whole a transaction whose work swallowed a failure raised before its statement was sent', async () => {
    const insert = 'INSERT INTO layer_rows (id, note) VALUES ($1, $2)';
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const ran: string[] = [];
    const swallowing: Array<[string, (tx: Transaction) => Promise<unknown>]> = [
      // The parameter cannot be sent: neither the statement nor the write queued ahead of it reached the database.
      ['a parameter that cannot be sent', (tx) => tx.query('INSERT INTO layer_rows (id, doc) VALUES ($1, $2)', [81, circular]).catch(() => [])],
      // One write more than may wait, refused as it is queued.
      [
        'a write refused',
        async (tx) => {
          try {
            for (let index = 0; index < WRITES_WAITING_MAX; index++) tx.write('SELECT 1');
          } catch {
            // Swallowed.
          }
        },
      ],
    ];
    for (const [name, swallow] of swallowing) {
      const failed = db.transaction(async (tx) => {
        afterRollback(tx, () => ran.push(`${name}: rolled back`));
        afterCommit(tx, () => ran.push(`${name}: committed`));
        tx.write(insert, [80, 'ahead of the failure']);
        await swallow(tx);
        await tx.query(insert, [82, 'after the failure']);
      });
      await expect(failed).rejects.toThrow(/rolled back|aborted/i);
    }
    expect(ran).toEqual(swallowing.map(([name]) => `${name}: rolled back`));
    expect(await db.query('SELECT id FROM layer_rows WHERE id >= $1 AND id < $2', [80, 90])).toEqual([]);
  });

  it('runs what waits for a commit once the transaction commits, and what waits for a rollback once it rolls back', async () => {
    const ran: string[] = [];
    const awaitBoth = (tx: Transaction, name: string) => {
      afterCommit(tx, () => ran.push(`${name} committed`));
      afterRollback(tx, () => ran.push(`${name} rolled back`));
    };
    await db.transaction(async (tx) => awaitBoth(tx, 'resolved'));
    const thrown = db.transaction(async (tx) => {
      awaitBoth(tx, 'thrown');
      throw new Error('roll back');
    });
    await expect(thrown).rejects.toThrow('roll back');
    const swallowed = db.transaction(async (tx) => {
      awaitBoth(tx, 'swallowed');
      await tx.query('SELECT 1 / 0').catch(() => {});
    });
    await expect(swallowed).rejects.toThrow();
    // Refused by the server at COMMIT: a deferred constraint is checked then.
    await db.exec('CREATE TABLE commit_refused (id integer UNIQUE DEFERRABLE INITIALLY DEFERRED)');
    const refused = db.transaction(async (tx) => {
      awaitBoth(tx, 'refused at commit');
      await tx.query('INSERT INTO commit_refused VALUES (1), (1)');
    });
    await expect(refused).rejects.toThrow(/duplicate key/);
    let attempts = 0;
    // PostgreSQL tries a transaction that failed to serialize again; the embedded engine never fails so.
    const retried = db.transaction(async (tx) => {
      const attempt = ++attempts;
      awaitBoth(tx, `attempt ${attempt}`);
      if (attempt === 1) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
    });
    if (engine === 'postgres') await retried;
    else await expect(retried).rejects.toThrow('could not serialize');
    expect(ran).toEqual([
      'resolved committed',
      'thrown rolled back',
      'swallowed rolled back',
      'refused at commit rolled back',
      'attempt 1 rolled back',
      ...(engine === 'postgres' ? ['attempt 2 committed'] : []),
    ]);
  });
});

describe.runIf(engine === 'pglite')('named statements on the embedded engine', () => {
  // A session of each test's own: a runner numbers its names from 1, as the service's one runner per session does.
  let lite: PGlite;
  beforeEach(async () => {
    lite = await PGlite.create('memory://');
    await lite.exec('CREATE TABLE t (id integer PRIMARY KEY)');
  });
  afterEach(() => lite.close());
  // Which texts are prepared, sorted: prepare_time does not always advance between two statements, so it cannot order them.
  const prepared = async () =>
    (await lite.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements')).rows.map((r) => r.statement).sort();

  it('parses each text once and keeps at most the limit, closing the oldest first', async () => {
    const db = await pgliteDb(lite, 2);
    const texts = ['SELECT $1::int AS n', 'SELECT $1::int + 1 AS n', 'SELECT $1::int + 2 AS n'];
    for (let i = 0; i < 3; i++) expect(await db.query(texts[0]!, [i])).toEqual([{ n: i }]);
    expect(await prepared()).toEqual([texts[0]]);
    expect(await db.query(texts[1]!, [1])).toEqual([{ n: 2 }]);
    expect(await db.query(texts[2]!, [1])).toEqual([{ n: 3 }]);
    expect(await prepared()).toEqual([texts[1], texts[2]].sort());
    // The closed one is prepared again when it comes back.
    expect(await db.query(texts[0]!, [5])).toEqual([{ n: 5 }]);
    expect(await prepared()).toEqual([texts[2], texts[0]].sort());
  });

  it('is how the service runs every statement on the embedded engine', async () => {
    const db = await openTestDb();
    try {
      const text = 'SELECT $1::text AS echoed';
      for (const word of ['one', 'two']) expect(await db.query(text, [word])).toEqual([{ echoed: word }]);
      await db.transaction((tx) => tx.query(text, ['three']));
      expect(await db.query('SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1', [text])).toEqual([{ n: 1 }]);
    } finally {
      await db.close();
    }
  });

  it("sends a transaction's BEGIN and writes in the exchange of its next statement, or of its COMMIT, when the engine is idle", async () => {
    const db = await pgliteDb(lite, 10);
    let exchanges = 0;
    const raw = lite.execProtocolRawSync.bind(lite);
    lite.execProtocolRawSync = (message) => {
      exchanges += 1;
      return raw(message);
    };
    await writesAroundRead(db, 't', 10);
    exchanges = 0;
    await writesAroundRead(db, 't', 20);
    // BEGIN and the writes with the read, then the last write with the COMMIT.
    expect(exchanges).toBe(2);
    await db.transaction(async (tx) => tx.write('INSERT INTO t VALUES ($1)', [30]));
    expect(exchanges).toBe(3);
    // A transaction that runs nothing sends nothing.
    await db.transaction(async () => {});
    expect(exchanges).toBe(3);
    expect((await lite.query<{ id: number }>('SELECT id FROM t ORDER BY id')).rows.map(({ id }) => id)).toEqual([10, 11, 12, 20, 21, 22, 30]);
  });

  it('names nothing for a text that does not parse, and the session stays usable', async () => {
    const db = await pgliteDb(lite, 10);
    const before = await prepared();
    await expect(db.query('SELEC 1')).rejects.toMatchObject({ code: '42601' });
    expect(await prepared()).toEqual(before);
    expect(await db.query('INSERT INTO t VALUES ($1) RETURNING id', [7])).toEqual([{ id: 7 }]);
  });
});

describe.runIf(engine === 'postgres')('pooled connections on PostgreSQL', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openTestDb();
  });
  afterAll(() => db.close());

  const backend = async () => (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!.pid;

  it('keep their connection after a statement the server refused, so one caller\'s errors cost the others nothing', async () => {
    // One caller at a time reuses the connection released last; a discarded one would show as a new backend.
    const before = await backend();
    for (const refused of ['SELECT 1 / 0 AS n', "SELECT 'x'::integer AS n", 'SELECT $1::text AS t']) {
      const params = refused.includes('$1') ? ['nul \u0000 in text'] : [];
      await expect(db.query(refused, params)).rejects.toMatchObject({ code: expect.stringMatching(/^22/) });
      expect(await backend()).toBe(before);
    }
  });

  it('run the rollback effects of a transaction whose connection failed before its COMMIT could be sent', async () => {
    const ran: string[] = [];
    const failed = db.transaction(async (tx) => {
      afterRollback(tx, () => ran.push('rolled back'));
      afterCommit(tx, () => ran.push('committed'));
      const { pid } = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!;
      // Ended by the server while the work is busy elsewhere: the COMMIT that follows has no connection to go on.
      await db.query('SELECT pg_terminate_backend($1)', [pid]);
      const gone = async () => (await db.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).length === 0;
      await expect.poll(gone).toBe(true);
      // The server's farewell reaches the client at its next turn of reading.
      await new Promise((resolve) => setTimeout(resolve, 200));
      tx.write('SELECT 1');
    });
    await expect(failed).rejects.toMatchObject({ code: '08003' });
    expect(ran).toEqual(['rolled back']);
  });

  it('keep a text usable on their connection after its parameter could not be sent', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    // A text no connection has prepared yet: its first use would parse it under its name.
    const sql = `SELECT $1::jsonb AS doc, '${randomUUID()}' AS text_of_its_own`;
    await db.session(async (session) => {
      await expect(session.query(sql, [circular])).rejects.toThrow(/circular/i);
      expect(await session.query<{ doc: unknown }>(sql, [{ sent: true }])).toEqual([expect.objectContaining({ doc: { sent: true } })]);
    });
  });
});

describe.runIf(engine === 'postgres')('transactions on PostgreSQL', () => {
  let db: Db;
  let proxy: Server;
  let database: { url: string; drop(): Promise<void> };
  // What the service sends to the server, counted: each write is a round trip's question.
  let writes = 0;
  beforeAll(async () => {
    database = await createPostgresDatabase();
    const server = new URL(database.url);
    proxy = createServer((client) => {
      const upstream = connect(Number(server.port || 5432), server.hostname);
      client.on('data', (chunk) => {
        writes += 1;
        upstream.write(chunk);
      });
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const through = new URL(database.url);
    through.host = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    db = await openPostgres(through.toString());
    await db.exec('CREATE TABLE counted (id integer PRIMARY KEY)');
  });
  afterAll(async () => {
    await db.close();
    proxy.close();
    await database.drop();
  });

  it('send BEGIN with their first statement: two statements and the commit take three round trips', async () => {
    const insert = 'INSERT INTO counted VALUES ($1)';
    const twoStatements = (id: number) =>
      db.transaction(async (tx) => {
        await tx.query(insert, [id]);
        await tx.query('SELECT count(*)::int AS n FROM counted');
      });
    // Once first, so that the connection is open and the statements prepared on it.
    await twoStatements(1);
    writes = 0;
    await twoStatements(2);
    expect(writes).toBe(3);
    // A transaction that runs nothing sends nothing.
    await db.transaction(async () => {});
    expect(writes).toBe(3);
    expect(await db.query('SELECT id FROM counted ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('send their writes ahead of the next statement or the COMMIT: a transaction that only writes is one round trip', async () => {
    const insert = 'INSERT INTO counted VALUES ($1)';
    await writesAroundRead(db, 'counted', 10);
    writes = 0;
    await writesAroundRead(db, 'counted', 20);
    expect(writes).toBe(2);
    await db.transaction(async (tx) => {
      tx.write(insert, [30]);
      tx.write(insert, [31]);
    });
    expect(writes).toBe(3);
    const ids = (await db.query<{ id: number }>('SELECT id FROM counted WHERE id >= $1 ORDER BY id', [10])).map(({ id }) => id);
    expect(ids).toEqual([10, 11, 12, 20, 21, 22, 30, 31]);
  });
});

describe.runIf(engine === 'postgres')('statements prepared before another process changes the schema', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openTestDb();
    await db.exec('CREATE TABLE evolving (id integer PRIMARY KEY, note text)');
  });
  afterAll(() => db.close());

  // What a newer version's migration does while this process runs: the server then refuses `SELECT *` statements
  // prepared before it ('cached plan must not change result type') on every connection that prepared them.
  const addColumn = (name: string) => db.exec(`ALTER TABLE evolving ADD COLUMN ${name} integer`);

  it('are prepared again, and answer with the new columns', async () => {
    const read = 'SELECT * FROM evolving ORDER BY id';
    await db.query('INSERT INTO evolving (id, note) VALUES ($1, $2)', [1, 'first']);
    // Prepared on several pooled connections at once.
    await Promise.all(Array.from({ length: 4 }, () => db.query(read)));
    await addColumn('added');
    const after = await Promise.all(Array.from({ length: 4 }, () => db.query(read)));
    expect(after).toEqual(Array.from({ length: 4 }, () => [{ id: 1, note: 'first', added: null }]));
  });

  it('retry the transaction they aborted, which then commits once', async () => {
    const write = (id: number) =>
      db.transaction(async (tx) => {
        const [row] = await tx.query('UPDATE evolving SET note = note || $2 WHERE id = $1 RETURNING *', [1, '+']);
        await tx.query('INSERT INTO evolving (id, note) VALUES ($1, $2)', [id, 'inserted']);
        return row;
      });
    await write(101);
    await addColumn('added_later');
    expect(await write(102)).toEqual({ id: 1, note: 'first++', added: null, added_later: null });
    expect(await db.query('SELECT id, note FROM evolving ORDER BY id')).toEqual([
      { id: 1, note: 'first++' },
      { id: 101, note: 'inserted' },
      { id: 102, note: 'inserted' },
    ]);
  });
});

describe(`one session shared by concurrent callers (${engine})`, () => {
  let db: Db;
  beforeAll(async () => {
    db = await openTestDb();
    await db.exec('CREATE TABLE shared_rows (id integer PRIMARY KEY, source text NOT NULL)');
  });
  afterAll(() => db.close());

  it('answers each of many concurrent statements with its own result', async () => {
    const answers = await Promise.all(Array.from({ length: 300 }, (_, n) => db.query<{ n: number }>('SELECT $1::int * 2 AS n', [n])));
    expect(answers.map((rows) => rows[0]!.n)).toEqual(Array.from({ length: 300 }, (_, n) => n * 2));
  });

  it('never runs a statement from outside a transaction inside it', async () => {
    let inside: () => void = () => {};
    const begun = new Promise<void>((resolve) => (inside = resolve));
    const rolledBack = db
      .transaction(async (tx) => {
        await tx.query('INSERT INTO shared_rows VALUES ($1, $2)', [1, 'transaction']);
        inside();
        // Statements from outside are asked for while this transaction is open...
        await new Promise((resolve) => setTimeout(resolve, 50));
        throw new Error('roll back');
      })
      .catch((error: Error) => error.message);
    await begun;
    const outside = Promise.all([2, 3, 4].map((id) => db.query('INSERT INTO shared_rows VALUES ($1, $2)', [id, 'outside'])));
    expect(await rolledBack).toBe('roll back');
    await outside;
    // ...and committed on their own: the rollback took only the transaction's row.
    expect(await db.query('SELECT id, source FROM shared_rows ORDER BY id')).toEqual([2, 3, 4].map((id) => ({ id, source: 'outside' })));
  });

  it('reports a transaction whose work swallowed a failed statement as rolled back, not committed', async () => {
    const swallowed = db.transaction(async (tx) => {
      await tx.query('INSERT INTO shared_rows VALUES ($1, $2)', [10, 'kept only if committed']);
      await tx.query('INSERT INTO shared_rows VALUES ($1, $2)', [2, 'duplicate']).catch(() => {});
    });
    await expect(swallowed).rejects.toThrow();
    expect(await db.query('SELECT id FROM shared_rows WHERE id = $1', [10])).toEqual([]);
  });

  it('tells a listener of each notification on its channel', async () => {
    let heard = 0;
    const stop = await db.listen('tolov_layer_test', { notified: () => (heard += 1), listening: () => {} });
    try {
      await db.query("SELECT pg_notify('tolov_layer_test', 'one'), pg_notify('tolov_other_channel', 'two')");
      for (let waited = 0; heard < 1 && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(heard).toBe(1);
    } finally {
      await stop();
    }
  });
});

describe.runIf(engine === 'pglite')('the embedded engine on a thread of its own', () => {
  it('answers a transaction statement larger than the shared answer memory starts with, and the next ones', async () => {
    const db = await openTestDb();
    try {
      const sizes = await db.transaction(async (tx) => {
        const [large] = await tx.query<{ text: string }>("SELECT repeat('x', $1::int) AS text", [300_000]);
        const [small] = await tx.query<{ n: number }>('SELECT 7 AS n');
        return [large!.text.length, small!.n];
      });
      expect(sizes).toEqual([300_000, 7]);
    } finally {
      await db.close();
    }
  });

  it('answers each statement of a transaction with its own result while other statements and transactions run', async () => {
    // A transaction's statements are answered through memory both threads share. The engine thread's wake-up for one
    // answer can arrive after that answer was read, while the next statement waits: taken for the next answer, it
    // handed that statement the one before (a SELECT answered "BEGIN", a row that was there read as missing).
    const db = await openTestDb();
    try {
      const wrong: string[] = [];
      const check = (label: string, rows: { n: number }[], n: number) => {
        if (rows.length !== 1 || rows[0]!.n !== n) wrong.push(`${label} ${n}: ${JSON.stringify(rows)}`);
      };
      let next = 0;
      const transactions = async (count: number) => {
        for (let done = 0; done < count; done++) {
          await db.transaction(async (tx) => {
            for (let step = 0; step < 4; step++) {
              const n = next++;
              check('in a transaction', await tx.query<{ n: number }>('SELECT $1::int AS n', [n]), n);
            }
          });
        }
      };
      const statements = async (count: number) => {
        for (let done = 0; done < count; done++) {
          const n = next++;
          check('alone', await db.query<{ n: number }>('SELECT $1::int AS n', [n]), n);
        }
      };
      await Promise.all([...Array.from({ length: 4 }, () => transactions(500)), ...Array.from({ length: 8 }, () => statements(500))]);
      expect(wrong.slice(0, 5)).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it('refuses every call once closed, with a message that says so', async () => {
    const db = await openTestDb();
    await db.close();
    await expect(db.query('SELECT 1')).rejects.toThrow(/closed/);
    await expect(db.transaction((tx) => tx.query('SELECT 1'))).rejects.toThrow(/closed/);
  });

  it('gives up an engine that does not answer a statement of a transaction in time, for good: the database is lost', async () => {
    const db = await openPglite('memory://', { answerWaitMs: 200 });
    const stillThere = Symbol('not lost');
    const lostOrNot = () => Promise.race([db.lost, new Promise((resolve) => setTimeout(() => resolve(stillThere), 100))]);
    expect(await lostOrNot()).toBe(stillThere);
    await expect(db.transaction((tx) => tx.query('SELECT pg_sleep(3)'))).rejects.toThrow(/did not answer within 200 ms/);
    expect(((await lostOrNot()) as Error).message).toMatch(/did not answer within 200 ms/);
    // Its late answer can never be read as another statement's: nothing more is sent to it.
    await expect(db.query('SELECT 1')).rejects.toThrow(/did not answer within 200 ms/);
    await db.close();
  });

  it('is not lost when it is closed', async () => {
    const db = await openTestDb();
    await db.close();
    const closed = Symbol('closed');
    expect(await Promise.race([db.lost, new Promise((resolve) => setTimeout(() => resolve(closed), 100))])).toBe(closed);
  });

  it('opens a data folder for one process at a time, and takes over the lock of a process that is gone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tolov-lock-'));
    try {
      const db = await openPglite(dir);
      await expect(openPglite(dir)).rejects.toThrow(new FolderInUseError(dir, process.pid).message);
      await db.close();
      // Closed, it is free again; a lock left by a killed process (its pid no longer running) is taken over.
      const gone = spawn(process.execPath, ['-e', '']);
      await new Promise((resolve) => gone.once('exit', resolve));
      await writeFile(join(dir, 'tolov.pid'), `${gone.pid}\n`);
      const again = await openPglite(dir);
      expect(await again.query<{ n: number }>('SELECT 1 AS n')).toEqual([{ n: 1 }]);
      await again.close();
      // So is one naming this very process without its holding it: an earlier process had the pid (a container's 1).
      await writeFile(join(dir, 'tolov.pid'), `${process.pid}\n`);
      await (await openPglite(dir)).close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('gives a data folder to exactly one of several processes that start on it at the same moment, fresh or left by a killed one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tolov-lock-race-'));
    // Each process waits for the same instant, tries the lock, says what it got, and holds it until told to end.
    const contender = (startAt: number) => {
      const script = `
        import { lockFolder } from ${JSON.stringify(fileURLToPath(new URL('../../src/db/folder-lock.ts', import.meta.url)))};
        while (Date.now() < ${startAt});
        process.stdout.write(await lockFolder(${JSON.stringify(dir)}).then(() => 'locked', (error) => error.name));
        process.stdin.on('end', () => process.exit(0)).resume();`;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
      const outcome = new Promise<string>((resolve, reject) => {
        child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString()));
        child.once('error', reject);
        child.once('exit', () => reject(new Error('a contender ended before it tried the lock')));
      });
      const ended = new Promise((resolve) => child.once('exit', resolve));
      return { outcome, end: () => (child.stdin.end(), ended) };
    };
    const race = async () => {
      const startAt = Date.now() + 2_000;
      const contenders = Array.from({ length: 6 }, () => contender(startAt));
      try {
        return (await Promise.all(contenders.map((one) => one.outcome))).sort();
      } finally {
        await Promise.all(contenders.map((one) => one.end()));
      }
    };
    try {
      const oneLocked = ['FolderInUseError', 'FolderInUseError', 'FolderInUseError', 'FolderInUseError', 'FolderInUseError', 'locked'];
      expect(await race()).toEqual(oneLocked);
      // The winner ended without releasing it, as a killed process does: its lock names a process that is gone, and
      // again exactly one takes the folder over.
      expect(await readFile(join(dir, 'tolov.pid'), 'utf8')).toMatch(/^\d+\n/);
      expect(await race()).toEqual(oneLocked);
      // Nothing else is left in the folder: no half-made or moved-aside locks.
      expect((await readdir(dir)).filter((name) => name.startsWith('tolov.pid'))).toEqual(['tolov.pid']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports an engine that cannot start on its data folder, naming why', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tolov-not-a-folder-'));
    const file = join(dir, 'file');
    await writeFile(file, 'not a database');
    try {
      await expect(openPglite(file)).rejects.toThrow(/did not start/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
