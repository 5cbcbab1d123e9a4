// A standalone bank gateway and fiscal module speaking docs/rail-protocol.md, with switches for the faults of a real
// network, so that live mode runs end to end on one machine. Its state survives restarts (PGlite in its own folder).
import { readFile } from 'node:fs/promises';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { openPglite } from '../src/db/db.js';
import type { Db } from '../src/db/types.js';
import { gatewaySignature, gatewaySignatureValid, SIGNATURE_HEADER, TIMESTAMP_HEADER, type GatewayAnswer } from '../src/rails/protocol.js';
import { Bank, OPERATIONS_LIMIT_MAX } from './bank.js';
import { FiscalRegister, RECEIPTS_LIMIT_MAX } from './fiscal.js';

export interface Faults {
  latencyMs: number;
  /** Latency of the money calls alone (debits, refunds, transfers and receipt registrations), on top of `latencyMs`. */
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
  /** Signed gateway calls received, by path, counted on arrival: what reached the simulator, whatever it answered. */
  calls: Map<string, number>;
  /** Money calls received and not yet answered, now and at most so far: what the bank holds for its callers. */
  moneyCalls: MoneyCalls;
  /**
   * Holds every money call from its arrival until the returned function is called: a bank that has taken calls and
   * answers none of them yet, for as long as a test needs.
   */
  holdMoneyCalls(): () => void;
  close(): Promise<void>;
}

export interface MoneyCalls {
  inFlight: number;
  inFlightMax: number;
}

type Handler = (body: Record<string, unknown>) => Promise<GatewayAnswer>;
interface GatewayRequest {
  body: unknown;
  url: string;
  headers: Record<string, unknown>;
  raw: { socket: { destroy(): void } };
}

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

function signedAnswer(secret: string, reply: FastifyReply, status: number, body: GatewayAnswer): FastifyReply {
  const text = JSON.stringify(body);
  const timestamp = Math.floor(Date.now() / 1000);
  return reply
    .code(status)
    .header('content-type', 'application/json')
    .header(TIMESTAMP_HEADER, String(timestamp))
    .header(SIGNATURE_HEADER, gatewaySignature(secret, timestamp, text))
    .send(text);
}

/**
 * Runs a gateway call under the fault switches: before it runs (timeout, 5xx) or, for a call that changes the books
 * (`money`: a debit, a refund, a transfer, a registration), after it committed (drop, 202). A call that times out never
 * answers; its reply is kept in `pending` until the simulator closes.
 */
function gatewayCall(sim: BankSim, secret: string, pending: Set<FastifyReply>, gate: { held: Promise<void> | null }) {
  return (handler: Handler, money: boolean) => async (request: GatewayRequest, reply: FastifyReply) => {
    const answer = (status: number, body: GatewayAnswer) => signedAnswer(secret, reply, status, body);
    const raw = typeof request.body === 'string' ? request.body : '';
    if (!gatewaySignatureValid(secret, request.headers[TIMESTAMP_HEADER] as string, request.headers[SIGNATURE_HEADER] as string, raw)) {
      return answer(401, { result: 'refused', code: 'BAD_SIGNATURE' });
    }
    sim.calls.set(request.url, (sim.calls.get(request.url) ?? 0) + 1);
    // A call whose connection is already gone is not held: its 'close' came before anyone listened for it.
    if (money && !reply.raw.destroyed) {
      const load = sim.moneyCalls;
      load.inFlight += 1;
      load.inFlightMax = Math.max(load.inFlightMax, load.inFlight);
      // Answered, or its connection gone: either way the bank no longer holds it.
      reply.raw.once('close', () => (load.inFlight -= 1));
      if (gate.held) await gate.held;
    }
    const faults = sim.faults;
    const latencyMs = faults.latencyMs + (money ? faults.moneyLatencyMs : 0);
    if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
    if (Math.random() < faults.timeoutRate) {
      pending.add(reply);
      return reply;
    }
    if (Math.random() < faults.errorRate) return answer(503, { result: 'pending' });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw || '{}') as Record<string, unknown>;
    } catch {
      return answer(400, { result: 'refused', code: 'BAD_REQUEST' });
    }
    const result = await handler(body);
    if (money && Math.random() < faults.dropAfterCommitRate) {
      request.raw.socket.destroy();
      return reply;
    }
    if (money && Math.random() < faults.ambiguousRate) return answer(202, { result: 'pending' });
    return answer(result.result === 'not_found' ? 404 : result.result === 'pending' ? 202 : 200, result);
  };
}

function gatewayRoutes(app: FastifyInstance, bank: Bank, gateway: ReturnType<typeof gatewayCall>): void {
  const config = { config: {} };
  app.post('/v1/cards/tokenize', config, gateway((body) => bank.tokenize(body), false));
  app.post('/v1/cards/codes', config, gateway((body) => bank.sendCode(body), false));
  app.post('/v1/cards/codes/verify', config, gateway((body) => bank.verifyCode(body), false));
  app.post('/v1/debits', config, gateway((body) => bank.execute('debit', body), true));
  app.post('/v1/refunds', config, gateway((body) => bank.execute('refund', body), true));
  app.post('/v1/holds', config, gateway((body) => bank.execute('hold', body), true));
  app.post('/v1/holds/capture', config, gateway((body) => bank.endHold('capture', body), true));
  app.post('/v1/holds/release', config, gateway((body) => bank.endHold('release', body), true));
  app.post('/v1/transfers', config, gateway((body) => bank.transfer(body), true));
  app.post('/v1/operations/status', config, gateway((body) => bank.status(body), false));
  app.post('/v1/operations/fence', config, gateway((body) => bank.fence(body), false));
  app.post('/v1/operations/list', config, gateway((body) => bank.list(body), false));
}

function fiscalRoutes(app: FastifyInstance, register: FiscalRegister, gateway: ReturnType<typeof gatewayCall>): void {
  app.post('/v1/receipts/register', gateway((body) => register.register(body), true));
  app.post('/v1/receipts/status', gateway((body) => register.status(body), false));
  app.post('/v1/receipts/fence', gateway((body) => register.fence(body), false));
  app.post('/v1/receipts/list', gateway((body) => register.list(body), false));
}

/** `?limit=`: 1 to `max`, 100 when absent or unreadable. */
const limitOf = (text: string | undefined, max: number) => Math.min(Math.max(Number(text ?? 100) || 100, 1), max);

/** The simulator's own controls: no signature, for people and tests on this machine. */
function controlRoutes(app: FastifyInstance, bank: Bank, register: FiscalRegister, sim: BankSim): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get<{ Querystring: { phone?: string } }>('/sim/v1/sms', async (request, reply) => {
    const sms = await bank.lastSms(request.query.phone ?? '');
    return sms ?? reply.code(404).send({ error: 'no SMS to that phone' });
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
  app.get('/sim/v1/money-calls', async () => sim.moneyCalls);
  app.get<{ Querystring: { limit?: string } }>('/sim/v1/operations', async (request) => ({
    data: await bank.recentOperations(limitOf(request.query.limit, OPERATIONS_LIMIT_MAX)),
  }));
  app.get<{ Params: { mfo: string; number: string } }>('/sim/v1/accounts/:mfo/:number', async (request, reply) => {
    const account = `${request.params.mfo}/${request.params.number}`;
    const balance = await bank.accountBalance(account);
    return balance === null ? reply.code(404).send({ error: 'no transfer reached that account' }) : { account, balance };
  });
  app.get<{ Querystring: { limit?: string } }>('/sim/v1/receipts', async (request) => ({
    data: await register.recent(limitOf(request.query.limit, RECEIPTS_LIMIT_MAX)),
  }));
}

export async function startBankSim(options: { dataDir: string; secret: string; port: number; host?: string; faults?: Faults; log?: boolean }): Promise<BankSim> {
  const db = await openPglite(options.dataDir);
  await db.exec(await readFile(new URL('./schema.sql', import.meta.url), 'utf8'));
  const bank = new Bank(db, options.log !== false);
  await bank.issueTestCards();
  const register = new FiscalRegister(db);

  // A receipt of 100 lines with 128-character titles is the largest body the protocol carries. Closing drops every
  // connection at once, as a bank going down would: a client's idle or never-used pooled connection holds nothing up.
  const app = Fastify({ logger: false, bodyLimit: 128 * 1024, forceCloseConnections: true });
  const gate: { held: Promise<void> | null } = { held: null };
  const sim: BankSim = {
    app,
    db,
    url: '',
    faults: { ...(options.faults ?? NO_FAULTS) },
    calls: new Map(),
    moneyCalls: { inFlight: 0, inFlightMax: 0 },
    holdMoneyCalls() {
      let open!: () => void;
      const held = new Promise<void>((resolve) => (open = resolve));
      gate.held = held;
      return () => {
        if (gate.held === held) gate.held = null;
        open();
      };
    },
    close: async () => {},
  };
  const pending = new Set<FastifyReply>();
  // Gateway calls carry the raw body for the signature check.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  const gateway = gatewayCall(sim, options.secret, pending, gate);
  gatewayRoutes(app, bank, gateway);
  fiscalRoutes(app, register, gateway);
  controlRoutes(app, bank, register, sim);

  sim.url = await app.listen({ port: options.port, host: options.host ?? '127.0.0.1' });
  sim.close = async () => {
    for (const reply of pending) reply.raw.destroy();
    await app.close();
    await db.close();
  };
  return sim;
}
