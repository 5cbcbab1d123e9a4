// The live fiscal module: Tolov's client of a fiscal gateway speaking the fiscal part of docs/rail-protocol.md over
// the same signed transport as the bank gateway (gateway-client.ts).
//
// A registration is idempotent by the receipt's id and carries the deadline its retries share. A signed `ok` or
// `refused` is definite. Anything else (`pending`, a 5xx, a timeout, a reset, an unsigned, unreadable or malformed
// answer) is UNKNOWN: the receipt may have been registered, so the worker asks `status` before registering again.
import { GatewayCallError, GatewayClient } from './gateway-client.js';
import type { GatewayAnswer } from './protocol.js';
import type { FiscalModule, FiscalOutcome, FiscalReceipt, RegisteredReceipt, Registration } from './fiscal.js';

/**
 * A refusal that means "not registered, and may be later": the call reached the gateway after its deadline. Every other
 * refusal is the module's final word on the receipt.
 */
const RETRYABLE_REFUSALS = new Set(['DEADLINE_PASSED']);
/** The fields of a signed registration, as long as a fiscal module writes them at most. */
const FIELD_MAX_CHARS = 64;

type Refused = { status: 'REFUSED'; failureCode: string };

const isField = (value: unknown): value is string => typeof value === 'string' && value.length >= 1 && value.length <= FIELD_MAX_CHARS;

/** The registration an `ok` answer describes, or null when a field is missing or malformed. */
function registrationOf(answer: Record<string, unknown>): Registration | null {
  const { status, terminalId, receiptNumber, fiscalSign, registeredAt } = answer;
  const at = typeof registeredAt === 'string' ? new Date(registeredAt) : null;
  if (status !== 'REGISTERED' || !isField(terminalId) || !isField(receiptNumber) || !isField(fiscalSign) || at === null || Number.isNaN(at.getTime())) return null;
  return { status: 'REGISTERED', terminalId, receiptNumber, fiscalSign, registeredAt: at };
}

/** What a signed answer says of a receipt: registered, refused for good, or nothing certain (null). */
function settledBy(answer: GatewayAnswer): Registration | Refused | null {
  if (answer.result === 'ok') return registrationOf(answer);
  if (answer.result === 'refused' && isField(answer.code) && !RETRYABLE_REFUSALS.has(answer.code)) return { status: 'REFUSED', failureCode: answer.code };
  return null;
}

function isRegisteredReceipt(entry: unknown): entry is RegisteredReceipt {
  const { id, type, amount } = (entry ?? {}) as Record<string, unknown>;
  return isField(id) && (type === 'sale' || type === 'return') && Number.isSafeInteger(amount);
}

export class HttpFiscal implements FiscalModule {
  readonly callWindowMs: number;
  readonly #gateway: GatewayClient;

  constructor(options: { url: string; secret: string; timeoutMs: number }) {
    this.#gateway = new GatewayClient({ name: 'fiscal gateway', ...options });
    this.callWindowMs = this.#gateway.callWindowMs;
  }

  async register(receipt: FiscalReceipt): Promise<FiscalOutcome> {
    const result = await this.#gateway.beforeDeadline('/v1/receipts/register', { ...receipt });
    if ('unclear' in result) return { status: 'UNKNOWN' };
    return settledBy(result.answer) ?? { status: 'UNKNOWN' };
  }

  async status(id: string): Promise<FiscalOutcome | { status: 'NOT_FOUND' }> {
    const result = await this.#gateway.retrying('/v1/receipts/status', { id });
    if ('unclear' in result) return { status: 'UNKNOWN' };
    if (result.answer.result === 'not_found') return { status: 'NOT_FOUND' };
    return settledBy(result.answer) ?? { status: 'UNKNOWN' };
  }

  async fence(id: string): Promise<Registration | Refused | { status: 'FENCED' }> {
    const answer = await this.#gateway.certain('/v1/receipts/fence', { id });
    if (answer.result === 'fenced') return { status: 'FENCED' };
    const settled = settledBy(answer);
    if (settled === null) throw new GatewayCallError(`fiscal gateway fence answered ${answer.result}`);
    return settled;
  }

  async registrations(from: Date, to: Date, limit: number): Promise<RegisteredReceipt[]> {
    const answer = await this.#gateway.certain('/v1/receipts/list', { from: from.toISOString(), to: to.toISOString(), limit });
    const receipts = answer.result === 'ok' ? answer.receipts : null;
    if (!Array.isArray(receipts) || receipts.length > limit || !receipts.every(isRegisteredReceipt)) throw new GatewayCallError('fiscal gateway could not list its registrations');
    return receipts.map(({ id, type, amount }) => ({ id, type, amount }));
  }
}
