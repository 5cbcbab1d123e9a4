// The live rail: Tolov's client of a bank gateway speaking docs/rail-protocol.md over HTTP (gateway-client.ts).
//
// "ok" and "refused" are definite. A "pending" answer, a 5xx, a timeout after the request was sent, a reset connection,
// an unsigned or unreadable answer are all ambiguous: the money may have moved, so a debit or refund stays open
// (UNKNOWN) for reconciliation. Only calls safe to repeat are retried: status queries, and money calls under the same
// operation id, which the bank executes at most once.
import { formatExpiry } from './card-data.js';
import { GatewayCallError, GatewayClient } from './gateway-client.js';
import type { GatewayAnswer } from './protocol.js';
import type { CardDetails, ExecutedOutcome, FenceOutcome, HoldEnd, MoneyOperation, OperationsQuery, Rail, RailOutcome, RecordedOperation, TokenizeResult, TransferOperation } from './rail.js';

/** Refusals passed on as they are; any other refusal of a money call means it did not execute: PROCESSING_ERROR. */
const FAILURE_CODES = new Set(['INSUFFICIENT_FUNDS', 'CARD_BLOCKED', 'PROCESSING_ERROR', 'ACCOUNT_CLOSED', 'HOLD_NOT_ACTIVE', 'AMOUNT_EXCEEDS_HOLD']);

/** Outcomes the bank reports of an operation it executed: ok, or a refusal naming why. */
function executed(answer: GatewayAnswer): ExecutedOutcome | null {
  if (answer.result === 'ok') return { status: 'SUCCEEDED' };
  if (answer.result === 'refused') return { status: 'FAILED', failureCode: FAILURE_CODES.has(answer.code) ? answer.code : 'PROCESSING_ERROR' };
  return null;
}

export class HttpRail implements Rail {
  readonly callWindowMs: number;
  readonly #gateway: GatewayClient;

  constructor(options: { url: string; secret: string; timeoutMs: number }) {
    this.#gateway = new GatewayClient({ name: 'bank gateway', ...options });
    this.callWindowMs = this.#gateway.callWindowMs;
  }

  async tokenize(card: CardDetails): Promise<TokenizeResult> {
    const answer = await this.#gateway.answer('/v1/cards/tokenize', { pan: card.pan, expiry: formatExpiry(card.expiry), phone: card.phone });
    if (answer.result === 'ok') return { ok: true, token: String(answer.token), network: answer.network === 'humo' ? 'humo' : 'uzcard' };
    if (answer.result === 'refused' && answer.code === 'CARD_INACTIVE') return { ok: false, refusal: 'CARD_INACTIVE' };
    throw new GatewayCallError(`bank gateway tokenize answered ${JSON.stringify(answer)}`);
  }

  async sendCode(token: string): Promise<void> {
    const answer = await this.#gateway.answer('/v1/cards/codes', { token });
    if (answer.result !== 'ok') throw new GatewayCallError(`bank gateway could not send a code: ${JSON.stringify(answer)}`);
  }

  async verifyCode(token: string, code: string): Promise<boolean> {
    const answer = await this.#gateway.answer('/v1/cards/codes/verify', { token, code });
    if (answer.result === 'ok') return true;
    if (answer.result === 'refused') return false;
    throw new GatewayCallError(`bank gateway verify answered ${answer.result}`);
  }

  debit(operation: MoneyOperation): Promise<RailOutcome> {
    return this.#money('/v1/debits', operation);
  }

  refund(operation: MoneyOperation & { debitOperationId: string }): Promise<RailOutcome> {
    return this.#money('/v1/refunds', operation);
  }

  hold(operation: MoneyOperation): Promise<RailOutcome> {
    return this.#money('/v1/holds', operation);
  }

  capture(operation: HoldEnd): Promise<RailOutcome> {
    return this.#money('/v1/holds/capture', operation);
  }

  release(operation: HoldEnd): Promise<RailOutcome> {
    return this.#money('/v1/holds/release', operation);
  }

  transfer(operation: TransferOperation): Promise<RailOutcome> {
    return this.#money('/v1/transfers', operation);
  }

  async operations({ from, to, after, limit }: OperationsQuery): Promise<RecordedOperation[]> {
    const answer = await this.#gateway.certain('/v1/operations/list', { from: from.toISOString(), to: to.toISOString(), ...(after === null ? {} : { after }), limit });
    if (answer.result !== 'ok') throw new GatewayCallError('bank gateway could not list its operations');
    return (answer.operations as Array<Omit<RecordedOperation, 'executedAt'> & { createdAt: string }>).map(({ operationId, type, amount, status, createdAt }) => ({
      operationId,
      type,
      amount,
      status,
      executedAt: new Date(createdAt),
    }));
  }

  async fence(operationId: string): Promise<FenceOutcome> {
    const answer = await this.#gateway.certain('/v1/operations/fence', { operationId });
    if (answer.result === 'fenced') return { status: 'FENCED' };
    const outcome = executed(answer);
    if (outcome === null) throw new GatewayCallError(`bank gateway fence answered ${answer.result}`);
    return outcome;
  }

  /** A money call, under the deadline its retries share; anything but a definite answer leaves it UNKNOWN. */
  async #money(path: string, operation: MoneyOperation | HoldEnd | TransferOperation): Promise<RailOutcome> {
    const result = await this.#gateway.beforeDeadline(path, { ...operation });
    if ('unclear' in result) return { status: 'UNKNOWN' };
    return executed(result.answer) ?? { status: 'UNKNOWN' };
  }
}
