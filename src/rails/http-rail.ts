// The live rail: Tolov's client of a bank gateway speaking docs/rail-protocol.md over HTTP.
//
// Every answer is classified exactly. "ok" and "refused" are definite. A "pending" answer, a 5xx, a timeout after the
// request was sent, a reset connection, an unsigned or unreadable answer are all ambiguous: the money may have moved,
// so a debit or refund stays open (UNKNOWN) for reconciliation. Calls are retried a bounded number of times, and only
// those that are safe to repeat: status queries, and money calls under the same operation id, which the bank executes
// at most once.
import { Pool } from 'undici';
import { formatExpiry } from './card-data.js';
import { gatewaySignature, gatewaySignatureValid, SIGNATURE_HEADER, TIMESTAMP_HEADER, type GatewayAnswer } from './protocol.js';
import type { CardDetails, ExecutedOutcome, FenceOutcome, MoneyOperation, Rail, RailOutcome, RecordedOperation, TokenizeResult } from './rail.js';

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

/** Outcomes the bank reports of an operation it executed: ok, or a refusal naming why. */
function executed(answer: GatewayAnswer): ExecutedOutcome | null {
  if (answer.result === 'ok') return { status: 'SUCCEEDED' };
  if (answer.result === 'refused') return { status: 'FAILED', failureCode: FAILURE_CODES.has(answer.code) ? answer.code : 'PROCESSING_ERROR' };
  return null;
}

export class HttpRail implements Rail {
  readonly callWindowMs: number;
  readonly #base: URL;
  readonly #connectTimeoutMs: number;
  readonly #pool: Pool;

  constructor(private readonly options: { url: string; secret: string; timeoutMs: number }) {
    this.#base = new URL(options.url);
    this.#connectTimeoutMs = Math.min(CONNECT_TIMEOUT_MS, options.timeoutMs);
    this.#pool = new Pool(this.#base.origin, {
      connections: CONNECTIONS,
      connect: { timeout: this.#connectTimeoutMs },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    this.callWindowMs = ATTEMPTS_MAX * (this.#connectTimeoutMs + options.timeoutMs) + RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
  }

  async tokenize(card: CardDetails): Promise<TokenizeResult> {
    const answer = await this.#plain('/v1/cards/tokenize', { pan: card.pan, expiry: formatExpiry(card.expiry), phone: card.phone });
    if (answer.result === 'ok') return { ok: true, token: String(answer.token), network: answer.network === 'humo' ? 'humo' : 'uzcard' };
    if (answer.result === 'refused' && answer.code === 'CARD_INACTIVE') return { ok: false, refusal: 'CARD_INACTIVE' };
    throw new RailCallError(`bank gateway tokenize answered ${JSON.stringify(answer)}`);
  }

  async sendCode(token: string): Promise<void> {
    const answer = await this.#plain('/v1/cards/codes', { token });
    if (answer.result !== 'ok') throw new RailCallError(`bank gateway could not send a code: ${JSON.stringify(answer)}`);
  }

  async verifyCode(token: string, code: string): Promise<boolean> {
    const answer = await this.#plain('/v1/cards/codes/verify', { token, code });
    if (answer.result === 'ok') return true;
    if (answer.result === 'refused') return false;
    throw new RailCallError(`bank gateway verify answered ${answer.result}`);
  }

  debit(operation: MoneyOperation): Promise<RailOutcome> {
    return this.#money('/v1/debits', operation);
  }

  refund(operation: MoneyOperation & { debitOperationId: string }): Promise<RailOutcome> {
    return this.#money('/v1/refunds', operation);
  }

  async operations(from: Date, to: Date, limit: number): Promise<RecordedOperation[]> {
    const result = await this.#exchangeRetrying('/v1/operations/list', { from: from.toISOString(), to: to.toISOString(), limit });
    if ('unclear' in result || result.answer.result !== 'ok') throw new RailCallError('bank gateway could not list its operations');
    return (result.answer.operations as RecordedOperation[]).map(({ operationId, type, amount, status }) => ({ operationId, type, amount, status }));
  }

  async fence(operationId: string): Promise<FenceOutcome> {
    const result = await this.#exchangeRetrying('/v1/operations/fence', { operationId });
    if ('unclear' in result) throw new RailCallError(`bank gateway fence: ${result.unclear}`);
    if (result.answer.result === 'fenced') return { status: 'FENCED' };
    const outcome = executed(result.answer);
    if (outcome === null) throw new RailCallError(`bank gateway fence answered ${result.answer.result}`);
    return outcome;
  }

  async #exchange(path: string, payload: unknown): Promise<Exchange> {
    const body = JSON.stringify(payload);
    const timestamp = Math.floor(Date.now() / 1000);
    const secret = this.options.secret;
    try {
      const response = await this.#pool.request({
        method: 'POST',
        path: `${this.#base.pathname.replace(/\/$/, '')}${path}`,
        headers: { 'content-type': 'application/json', [TIMESTAMP_HEADER]: String(timestamp), [SIGNATURE_HEADER]: gatewaySignature(secret, timestamp, body) },
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs + this.#connectTimeoutMs),
      });
      const text = await response.body.text();
      if (text.length > ANSWER_MAX_BYTES) return { unclear: 'answer too large' };
      const signed = gatewaySignatureValid(secret, response.headers[TIMESTAMP_HEADER] as string, response.headers[SIGNATURE_HEADER] as string, text);
      if (!signed) return { unclear: `unsigned answer (HTTP ${response.statusCode})` };
      const answer = JSON.parse(text) as GatewayAnswer;
      if (response.statusCode >= 500) return { unclear: `HTTP ${response.statusCode}` };
      return { answer, status: response.statusCode };
    } catch (error) {
      return { unclear: (error as Error).message.slice(0, 200) };
    }
  }

  /** Retries an exchange that gave nothing certain; for calls safe to repeat only. */
  async #exchangeRetrying(path: string, payload: unknown): Promise<Exchange> {
    let last: Exchange = { unclear: 'not sent' };
    for (let attempt = 0; attempt < ATTEMPTS_MAX; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt - 1]));
      last = await this.#exchange(path, payload);
      if (!('unclear' in last) && last.answer.result !== 'pending') return last;
    }
    return last;
  }

  /**
   * A money call, under a deadline that its retries share: the bank runs it before the deadline or never, so that
   * Tolov stops waiting no earlier than the bank stops trying.
   */
  async #money(path: string, operation: MoneyOperation): Promise<RailOutcome> {
    const deadline = new Date(Date.now() + this.callWindowMs).toISOString();
    const result = await this.#exchangeRetrying(path, { ...operation, deadline });
    if ('unclear' in result) return { status: 'UNKNOWN' };
    return executed(result.answer) ?? { status: 'UNKNOWN' };
  }

  /** Calls that move no money: a failure is an error for the caller to report, never a guess. */
  async #plain(path: string, payload: unknown): Promise<GatewayAnswer> {
    const result = await this.#exchange(path, payload);
    if ('unclear' in result) throw new RailCallError(`bank gateway ${path}: ${result.unclear}`);
    return result.answer;
  }
}
