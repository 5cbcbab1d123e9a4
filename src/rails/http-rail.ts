// The live rail: Tolov's client of a bank gateway speaking docs/rail-protocol.md over HTTP.
//
// Every answer is classified exactly. "ok" and "refused" are definite. A "pending" answer, a 5xx, a timeout after the
// request was sent, a reset connection, an unsigned or unreadable answer are all ambiguous: the money may have moved,
// so a debit or refund stays open (UNKNOWN) for reconciliation. Calls are retried a bounded number of times, and only
// those that are safe to repeat: status queries, and money calls under the same operation id, which the bank executes
// at most once.
import { Pool } from 'undici';
import { formatExpiry } from '../modules/cards/card-data.js';
import { gatewaySignature, gatewaySignatureValid, SIGNATURE_HEADER, TIMESTAMP_HEADER, type GatewayAnswer } from './protocol.js';
import type { ExecutedOutcome, MoneyOperation, Rail, RailOutcome, RecordedOperation } from './rail.js';

const CONNECT_TIMEOUT_MS = 2_000;
const ATTEMPTS_MAX = 3;
const RETRY_DELAYS_MS = [100, 400];
const CONNECTIONS = 32;
const ANSWER_MAX_BYTES = 1024 * 1024;
/** Refusals passed on as they are; any other refusal of a money call means it did not execute: PROCESSING_ERROR. */
const FAILURE_CODES = new Set(['INSUFFICIENT_FUNDS', 'CARD_BLOCKED', 'PROCESSING_ERROR']);

export class RailCallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RailCallError';
  }
}

/** What one HTTP exchange gave: a signed, readable answer, or nothing certain. */
type Exchange = { answer: GatewayAnswer; status: number } | { unclear: string };

export function httpRail(options: { url: string; secret: string; timeoutMs: number }): Rail {
  const base = new URL(options.url);
  const connectTimeoutMs = Math.min(CONNECT_TIMEOUT_MS, options.timeoutMs);
  const pool = new Pool(base.origin, {
    connections: CONNECTIONS,
    connect: { timeout: connectTimeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });

  const exchange = async (path: string, payload: unknown): Promise<Exchange> => {
    const body = JSON.stringify(payload);
    const timestamp = Math.floor(Date.now() / 1000);
    try {
      const response = await pool.request({
        method: 'POST',
        path: `${base.pathname.replace(/\/$/, '')}${path}`,
        headers: {
          'content-type': 'application/json',
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: gatewaySignature(options.secret, timestamp, body),
        },
        body,
        signal: AbortSignal.timeout(options.timeoutMs + connectTimeoutMs),
      });
      const text = await response.body.text();
      if (text.length > ANSWER_MAX_BYTES) return { unclear: 'answer too large' };
      const signed = gatewaySignatureValid(options.secret, response.headers[TIMESTAMP_HEADER] as string, response.headers[SIGNATURE_HEADER] as string, text);
      if (!signed) return { unclear: `unsigned answer (HTTP ${response.statusCode})` };
      const answer = JSON.parse(text) as GatewayAnswer;
      if (response.statusCode >= 500) return { unclear: `HTTP ${response.statusCode}` };
      return { answer, status: response.statusCode };
    } catch (error) {
      return { unclear: (error as Error).message.slice(0, 200) };
    }
  };

  /** Retries an exchange that gave nothing certain; for calls safe to repeat only. */
  const exchangeRetrying = async (path: string, payload: unknown): Promise<Exchange> => {
    let last: Exchange = { unclear: 'not sent' };
    for (let attempt = 0; attempt < ATTEMPTS_MAX; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt - 1]));
      last = await exchange(path, payload);
      if (!('unclear' in last) && last.answer.result !== 'pending') return last;
    }
    return last;
  };

  const callWindowMs = ATTEMPTS_MAX * (connectTimeoutMs + options.timeoutMs) + RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);

  /** Outcomes the bank reports of an operation it executed: ok, or a refusal naming why. */
  const executed = (answer: GatewayAnswer): ExecutedOutcome | null => {
    if (answer.result === 'ok') return { status: 'SUCCEEDED' };
    if (answer.result === 'refused') return { status: 'FAILED', failureCode: FAILURE_CODES.has(answer.code) ? answer.code : 'PROCESSING_ERROR' };
    return null;
  };

  /**
   * A money call, under a deadline that its retries share: the bank runs it before the deadline or never, so that
   * Tolov stops waiting no earlier than the bank stops trying.
   */
  const money = async (path: string, operation: MoneyOperation): Promise<RailOutcome> => {
    const deadline = new Date(Date.now() + callWindowMs).toISOString();
    const result = await exchangeRetrying(path, { ...operation, deadline });
    if ('unclear' in result) return { status: 'UNKNOWN' };
    return executed(result.answer) ?? { status: 'UNKNOWN' };
  };

  /** Calls that move no money: a failure is an error for the caller to report, never a guess. */
  const plain = async (path: string, payload: unknown): Promise<GatewayAnswer> => {
    const result = await exchange(path, payload);
    if ('unclear' in result) throw new RailCallError(`bank gateway ${path}: ${result.unclear}`);
    return result.answer;
  };

  return {
    callWindowMs,

    async tokenize(card) {
      const answer = await plain('/v1/cards/tokenize', { pan: card.pan, expiry: formatExpiry(card.expiry), phone: card.phone });
      if (answer.result === 'ok') return { ok: true, token: String(answer.token), network: answer.network === 'humo' ? 'humo' : 'uzcard' };
      if (answer.result === 'refused' && answer.code === 'CARD_INACTIVE') return { ok: false, refusal: 'CARD_INACTIVE' };
      throw new RailCallError(`bank gateway tokenize answered ${JSON.stringify(answer)}`);
    },

    async sendCode(token) {
      const answer = await plain('/v1/cards/codes', { token });
      if (answer.result !== 'ok') throw new RailCallError(`bank gateway could not send a code: ${JSON.stringify(answer)}`);
    },

    async verifyCode(token, code) {
      const answer = await plain('/v1/cards/codes/verify', { token, code });
      if (answer.result === 'ok') return true;
      if (answer.result === 'refused') return false;
      throw new RailCallError(`bank gateway verify answered ${answer.result}`);
    },

    debit: (operation) => money('/v1/debits', operation),
    refund: (operation) => money('/v1/refunds', operation),

    async operations(from, to, limit) {
      const result = await exchangeRetrying('/v1/operations/list', { from: from.toISOString(), to: to.toISOString(), limit });
      if ('unclear' in result || result.answer.result !== 'ok') throw new RailCallError('bank gateway could not list its operations');
      return (result.answer.operations as RecordedOperation[]).map(({ operationId, type, amount, status }) => ({ operationId, type, amount, status }));
    },

    async fence(operationId) {
      const result = await exchangeRetrying('/v1/operations/fence', { operationId });
      if ('unclear' in result) throw new RailCallError(`bank gateway fence: ${result.unclear}`);
      if (result.answer.result === 'fenced') return { status: 'FENCED' };
      const outcome = executed(result.answer);
      if (outcome === null) throw new RailCallError(`bank gateway fence answered ${result.answer.result}`);
      return outcome;
    },
  };
}
