// A standalone bank gateway speaking docs/rail-protocol.md, with switches for the faults of a real network, so that
// live mode runs end to end on one machine. Its state survives restarts (PGlite in its own folder).
import { createHash, randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { openPglite, type Db } from '../src/db/db.js';
import { luhnValid } from '../src/modules/cards/card-data.js';
import { randomBase62 } from '../src/lib/ids.js';
import { gatewaySignature, gatewaySignatureValid, SIGNATURE_HEADER, TIMESTAMP_HEADER, type GatewayAnswer } from '../src/rails/protocol.js';

export const SIM_PHONE = '998901234567';
const OPENING_BALANCE = 1_000_000_000_000;
const OPERATIONS_LIMIT_MAX = 10_000;
/** The test cards of CONTRACT §6, with the same behaviours as the test rail. */
const ISSUED: ReadonlyArray<[pan: string, behaviour: string]> = [
  ['8600000000000007', 'succeeds'],
  ['9860000000000000', 'succeeds'],
  ['8600000000000015', 'insufficient_funds'],
  ['8600000000000023', 'inactive'],
  ['8600000000000031', 'unclear_then_succeeds'],
  ['8600000000000049', 'unclear_then_fails'],
  ['8600000000000056', 'blocked'],
  ['8600000000000064', 'refund_unclear_then_succeeds'],
];

export interface Faults {
  latencyMs: number;
  /** Latency of the money calls alone (debits and refunds), on top of `latencyMs`. */
  moneyLatencyMs: number;
  timeoutRate: number;
  errorRate: number;
  dropAfterCommitRate: number;
  ambiguousRate: number;
}
const NO_FAULTS: Faults = { latencyMs: 0, moneyLatencyMs: 0, timeoutRate: 0, errorRate: 0, dropAfterCommitRate: 0, ambiguousRate: 0 };

export interface BankSim {
  app: FastifyInstance;
  db: Db;
  url: string;
  faults: Faults;
  close(): Promise<void>;
}

const hashPan = (pan: string) => createHash('sha256').update(`tolov-bank-sim:${pan}`).digest('hex');

export function parseFaults(value: unknown): Faults {
  const input = (value ?? {}) as Record<string, unknown>;
  const rate = (name: keyof Faults) => {
    const v = input[name] ?? 0;
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) throw new Error(`${name} must be a number from 0 to 1`);
    return v;
  };
  const milliseconds = (name: 'latencyMs' | 'moneyLatencyMs') => {
    const v = input[name] ?? 0;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 60_000) throw new Error(`${name} must be an integer from 0 to 60000`);
    return v;
  };
  return { latencyMs: milliseconds('latencyMs'), moneyLatencyMs: milliseconds('moneyLatencyMs'), timeoutRate: rate('timeoutRate'), errorRate: rate('errorRate'), dropAfterCommitRate: rate('dropAfterCommitRate'), ambiguousRate: rate('ambiguousRate') };
}

export async function startBankSim(options: { dataDir: string; secret: string; port: number; host?: string; faults?: Faults; log?: boolean }): Promise<BankSim> {
  const db = await openPglite(options.dataDir);
  await db.exec(await readFile(new URL('./schema.sql', import.meta.url), 'utf8'));
  for (const [pan, behaviour] of ISSUED) {
    await db.query(
      `INSERT INTO sim_cards (pan_hash, last4, network, behaviour, phone, status, balance) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (pan_hash) DO NOTHING`,
      [hashPan(pan), pan.slice(-4), pan.startsWith('9860') ? 'humo' : 'uzcard', behaviour, SIM_PHONE, behaviour === 'inactive' ? 'INACTIVE' : 'ACTIVE', OPENING_BALANCE],
    );
  }

  const app = Fastify({ logger: false, bodyLimit: 16 * 1024 });
  const sim: BankSim = { app, db, url: '', faults: { ...(options.faults ?? NO_FAULTS) }, close: async () => {} };
  const pending = new Set<FastifyReply>();

  // Gateway calls carry the raw body for the signature check.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  const answer = (reply: FastifyReply, status: number, body: GatewayAnswer) => {
    const text = JSON.stringify(body);
    const timestamp = Math.floor(Date.now() / 1000);
    return reply
      .code(status)
      .header('content-type', 'application/json')
      .header(TIMESTAMP_HEADER, String(timestamp))
      .header(SIGNATURE_HEADER, gatewaySignature(options.secret, timestamp, text))
      .send(text);
  };

  /** Runs a gateway call under the fault switches: before it runs (timeout, 5xx) or after it committed (drop, 202). */
  const gateway = (handler: (body: Record<string, unknown>, params: Record<string, string>) => Promise<GatewayAnswer>, money: boolean) =>
    async (request: { body: unknown; headers: Record<string, unknown>; params: unknown; raw: { socket: { destroy(): void } } }, reply: FastifyReply) => {
      const raw = typeof request.body === 'string' ? request.body : '';
      if (!gatewaySignatureValid(options.secret, request.headers[TIMESTAMP_HEADER] as string, request.headers[SIGNATURE_HEADER] as string, raw)) {
        return answer(reply, 401, { result: 'refused', code: 'BAD_SIGNATURE' });
      }
      const faults = sim.faults;
      const latencyMs = faults.latencyMs + (money ? faults.moneyLatencyMs : 0);
      if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
      if (Math.random() < faults.timeoutRate) {
        // Never answers, never executes: the caller's timeout ends it.
        pending.add(reply);
        return reply;
      }
      if (Math.random() < faults.errorRate) return answer(reply, 503, { result: 'pending' });
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw || '{}') as Record<string, unknown>;
      } catch {
        return answer(reply, 400, { result: 'refused', code: 'BAD_REQUEST' });
      }
      const result = await handler(body, request.params as Record<string, string>);
      if (money && Math.random() < faults.dropAfterCommitRate) {
        request.raw.socket.destroy();
        return reply;
      }
      if (money && Math.random() < faults.ambiguousRate) return answer(reply, 202, { result: 'pending' });
      return answer(reply, result.result === 'not_found' ? 404 : result.result === 'pending' ? 202 : 200, result);
    };

  const tokenOwner = async (token: string) =>
    (await db.query<{ behaviour: string; status: string; pan_hash: string; balance: number; phone: string }>(
      'SELECT c.behaviour, c.status, c.pan_hash, c.balance, t.phone FROM sim_tokens t JOIN sim_cards c ON c.pan_hash = t.pan_hash WHERE t.token = $1',
      [token],
    ))[0];

  const sendCode = async (token: string, phone: string) => {
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    await db.query('INSERT INTO sim_sms (phone, token, code) VALUES ($1, $2, $3)', [phone, token, code]);
    if (options.log !== false) process.stdout.write(`bank-sim: SMS to ${phone}: your code is ${code}\n`);
  };

  const operationAnswer = (row: { status: string; failure_code: string | null }): GatewayAnswer =>
    row.status === 'SUCCEEDED' ? { result: 'ok', status: 'SUCCEEDED' } : { result: 'refused', code: row.failure_code! };

  /**
   * Executes a money operation once per id, in one transaction with the balance it moves; never once fenced or past
   * its deadline (checked in that transaction, after any latency: the fence and the clock decide, not the order of arrival).
   */
  const execute = async (type: 'debit' | 'refund', body: Record<string, unknown>): Promise<GatewayAnswer> => {
    const { operationId, token, amount, deadline } = body as { operationId?: unknown; token?: unknown; amount?: unknown; deadline?: unknown };
    const deadlineMs = typeof deadline === 'string' ? Date.parse(deadline) : NaN;
    if (typeof operationId !== 'string' || typeof token !== 'string' || !Number.isSafeInteger(amount) || (amount as number) <= 0 || Number.isNaN(deadlineMs)) {
      return { result: 'refused', code: 'BAD_REQUEST' };
    }
    const card = await tokenOwner(token);
    if (!card) return { result: 'refused', code: 'UNKNOWN_TOKEN' };
    const row = await db.transaction(async (tx) => {
      const [existing] = await tx.query<{ status: string; failure_code: string | null; type: string }>(
        'SELECT status, failure_code, type FROM sim_operations WHERE operation_id = $1',
        [operationId],
      );
      if (existing) return existing;
      const [fenced] = await tx.query('SELECT 1 FROM sim_fences WHERE operation_id = $1', [operationId]);
      if (fenced) return { status: 'FAILED', failure_code: 'FENCED', type };
      if (Date.now() > deadlineMs) return { status: 'FAILED', failure_code: 'DEADLINE_PASSED', type };
      const [locked] = await tx.query<{ balance: number; status: string }>('SELECT balance, status FROM sim_cards WHERE pan_hash = $1 FOR UPDATE', [card.pan_hash]);
      let failure: string | null = null;
      if (type === 'debit') {
        if (card.behaviour === 'insufficient_funds' || locked!.balance < (amount as number)) failure = 'INSUFFICIENT_FUNDS';
        else if (card.behaviour === 'blocked' || locked!.status !== 'ACTIVE') failure = 'CARD_BLOCKED';
        else if (card.behaviour === 'unclear_then_fails') failure = 'PROCESSING_ERROR';
      }
      const delta = failure ? 0 : type === 'debit' ? -(amount as number) : (amount as number);
      if (delta !== 0) await tx.query('UPDATE sim_cards SET balance = balance + $2 WHERE pan_hash = $1', [card.pan_hash, delta]);
      const status = failure ? 'FAILED' : 'SUCCEEDED';
      await tx.query('INSERT INTO sim_operations (operation_id, type, token, amount, status, failure_code) VALUES ($1, $2, $3, $4, $5, $6)', [
        operationId,
        type,
        token,
        amount,
        status,
        failure,
      ]);
      return { status, failure_code: failure, type };
    });
    const unclear =
      (type === 'debit' && (card.behaviour === 'unclear_then_succeeds' || card.behaviour === 'unclear_then_fails')) ||
      (type === 'refund' && card.behaviour === 'refund_unclear_then_succeeds');
    return unclear ? { result: 'pending' } : operationAnswer(row);
  };

  const config = { config: {} };
  app.post('/v1/cards/tokenize', config, gateway(async (body) => {
    const { pan, phone } = body as { pan?: unknown; phone?: unknown };
    if (typeof pan !== 'string' || !/^\d{16}$/.test(pan) || !luhnValid(pan) || typeof phone !== 'string') return { result: 'refused', code: 'BAD_REQUEST' };
    const [card] = await db.query<{ status: string; network: string; phone: string }>('SELECT status, network, phone FROM sim_cards WHERE pan_hash = $1', [hashPan(pan)]);
    if (!card || card.status !== 'ACTIVE' || card.phone !== phone) return { result: 'refused', code: 'CARD_INACTIVE' };
    const token = `bk_${randomBase62(32)}`;
    await db.query('INSERT INTO sim_tokens (token, pan_hash, phone) VALUES ($1, $2, $3)', [token, hashPan(pan), phone]);
    return { result: 'ok', token, network: card.network };
  }, false));

  app.post('/v1/cards/codes', config, gateway(async (body) => {
    const card = await tokenOwner(String(body.token));
    if (!card) return { result: 'refused', code: 'UNKNOWN_TOKEN' };
    await sendCode(String(body.token), card.phone);
    return { result: 'ok' };
  }, false));

  app.post('/v1/cards/codes/verify', config, gateway(async (body) => {
    const [last] = await db.query<{ code: string }>('SELECT code FROM sim_sms WHERE token = $1 ORDER BY id DESC LIMIT 1', [String(body.token)]);
    return last && last.code === body.code ? { result: 'ok' } : { result: 'refused', code: 'WRONG_CODE' };
  }, false));

  app.post('/v1/debits', config, gateway((body) => execute('debit', body), true));
  app.post('/v1/refunds', config, gateway((body) => execute('refund', body), true));

  app.post('/v1/operations/status', config, gateway(async (body) => {
    const [row] = await db.query<{ status: string; failure_code: string | null }>('SELECT status, failure_code FROM sim_operations WHERE operation_id = $1', [
      String(body.operationId),
    ]);
    return row ? operationAnswer(row) : { result: 'not_found' };
  }, false));

  // Settles an operation for good: what it was if executed, or a fence that keeps it from ever executing. The fence
  // and the execution are each one transaction on the bank's one session, so exactly one of them comes first.
  app.post('/v1/operations/fence', config, gateway(async (body) => {
    const operationId = body.operationId;
    if (typeof operationId !== 'string' || operationId === '') return { result: 'refused', code: 'BAD_REQUEST' };
    return db.transaction(async (tx): Promise<GatewayAnswer> => {
      const [row] = await tx.query<{ status: string; failure_code: string | null }>('SELECT status, failure_code FROM sim_operations WHERE operation_id = $1', [
        operationId,
      ]);
      if (row) return operationAnswer(row);
      await tx.query('INSERT INTO sim_fences (operation_id) VALUES ($1) ON CONFLICT (operation_id) DO NOTHING', [operationId]);
      return { result: 'fenced' };
    });
  }, false));

  app.post('/v1/operations/list', config, gateway(async (body) => {
    const from = String(body.from ?? '1970-01-01T00:00:00Z');
    const to = String(body.to ?? '9999-01-01T00:00:00Z');
    const limit = Math.min(Number(body.limit ?? OPERATIONS_LIMIT_MAX), OPERATIONS_LIMIT_MAX);
    const rows = await db.query<{ operation_id: string; type: string; amount: number; status: string; failure_code: string | null; created_at: Date }>(
      'SELECT * FROM sim_operations WHERE created_at >= $1 AND created_at < $2 ORDER BY created_at LIMIT $3',
      [from, to, limit],
    );
    return {
      result: 'ok',
      operations: rows.map((row) => ({
        operationId: row.operation_id,
        type: row.type,
        amount: row.amount,
        status: row.status,
        failureCode: row.failure_code,
        createdAt: row.created_at.toISOString(),
      })),
    };
  }, false));

  // The simulator's own controls: no signature, for people and tests on this machine.
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get<{ Querystring: { phone?: string } }>('/sim/v1/sms', async (request, reply) => {
    const [row] = await db.query<{ phone: string; code: string; sent_at: Date }>('SELECT phone, code, sent_at FROM sim_sms WHERE phone = $1 ORDER BY id DESC LIMIT 1', [
      request.query.phone ?? '',
    ]);
    if (!row) return reply.code(404).send({ error: 'no SMS to that phone' });
    return { phone: row.phone, code: row.code, sentAt: row.sent_at.toISOString() };
  });
  app.post('/sim/v1/faults', async (request, reply) => {
    try {
      sim.faults = parseFaults(typeof request.body === 'string' && request.body ? JSON.parse(request.body) : {});
    } catch (error) {
      return reply.code(400).send({ error: (error as Error).message });
    }
    return sim.faults;
  });
  app.get('/sim/v1/faults', async () => sim.faults);
  app.get<{ Querystring: { limit?: string } }>('/sim/v1/operations', async (request) => {
    const limit = Math.min(Math.max(Number(request.query.limit ?? 100) || 100, 1), OPERATIONS_LIMIT_MAX);
    const rows = await db.query<{ operation_id: string; type: string; amount: number; status: string }>(
      'SELECT operation_id, type, amount, status FROM sim_operations ORDER BY created_at DESC LIMIT $1',
      [limit],
    );
    return { data: rows.map((row) => ({ operationId: row.operation_id, type: row.type, amount: row.amount, status: row.status })) };
  });

  sim.url = await app.listen({ port: options.port, host: options.host ?? '127.0.0.1' });
  sim.close = async () => {
    for (const reply of pending) reply.raw.destroy();
    await app.close();
    await db.close();
  };
  return sim;
}
