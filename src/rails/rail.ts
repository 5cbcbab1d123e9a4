// The rail boundary: every card operation, in test mode and live mode alike, goes through this interface.
import type { Expiry, Network } from './card-data.js';

export interface CardDetails {
  pan: string;
  expiry: Expiry;
  phone: string;
}

export type TokenizeResult =
  | { ok: true; token: string; network: Network }
  /** The bank will not bind this card. */
  | { ok: false; refusal: 'CARD_INACTIVE' };

/**
 * The outcome of a money movement. UNKNOWN means the bank's answer was missing or ambiguous: the money may have
 * moved, so the caller keeps the operation open and asks `status` later, never repeats it under a new id.
 */
export type RailOutcome = ExecutedOutcome | { status: 'UNKNOWN' };

/** What the bank recorded of an operation it executed. */
export type ExecutedOutcome = { status: 'SUCCEEDED' } | { status: 'FAILED'; failureCode: string };

export interface MoneyOperation {
  /** Made by Tolov, never by the client; the bank executes each id at most once. */
  operationId: string;
  token: string;
  amount: number;
}

/**
 * The end of a hold: a capture takes `amount` of it (at most what was held; the rest returns to the card), a release
 * returns all of it. Each has its own operation id; the hold is named by its own.
 */
export interface HoldEnd {
  operationId: string;
  holdOperationId: string;
  token: string;
  amount: number;
}

/** A credit transfer of a merchant's payout to its bank account (interbank, by MFO and account number). */
export interface TransferOperation {
  /** The payout's id: the bank executes each id at most once. */
  operationId: string;
  amount: number;
  bankMfo: string;
  accountNumber: string;
  /** The account holder's TIN and name, which the receiving bank checks against the account. */
  tin: string;
  holderName: string;
}

/** What the bank says of an operation it was asked to fence: its outcome if it executed, or that it never will. */
export type FenceOutcome = ExecutedOutcome | { status: 'FENCED' };

export interface Rail {
  /**
   * The longest a call can take before it has certainly ended (its timeouts). Until then an operation the bank does
   * not know may still be on its way, so reconciliation waits this long before taking "not found" as final.
   */
  readonly callWindowMs: number;
  /** Exchanges card data for a token; the card number is forgotten once this returns. */
  tokenize(card: CardDetails): Promise<TokenizeResult>;
  /** Sends (or sends again) the confirmation code to the phone the card was tokenized with. */
  sendCode(token: string): Promise<void>;
  verifyCode(token: string, code: string): Promise<boolean>;
  debit(operation: MoneyOperation): Promise<RailOutcome>;
  refund(operation: MoneyOperation & { debitOperationId: string }): Promise<RailOutcome>;
  /** Blocks the amount on the card without taking it (the first step of a two-step payment): refused as a debit is. */
  hold(operation: MoneyOperation): Promise<RailOutcome>;
  /** Takes at most the held amount and releases the rest; refused `HOLD_NOT_ACTIVE` when the hold has already ended. */
  capture(operation: HoldEnd): Promise<RailOutcome>;
  /** Returns the whole held amount to the card; refused `HOLD_NOT_ACTIVE` when the hold has already ended. */
  release(operation: HoldEnd): Promise<RailOutcome>;
  /** Pays a merchant out: `ACCOUNT_CLOSED` when the receiving bank refuses the account. */
  transfer(operation: TransferOperation): Promise<RailOutcome>;
  /**
   * Settles an operation id for good: the outcome the bank recorded if it executed it, or FENCED, after which the bank
   * refuses to execute it ever (a call of it still on its way, or sleeping at the bank, moves nothing).
   */
  fence(operationId: string): Promise<FenceOutcome>;
  /**
   * The bank's own record of the operations it executed in [from, to): at most `limit` of them, by operation id in byte
   * order, after `after` when given (the last id of the previous page).
   */
  operations(query: OperationsQuery): Promise<RecordedOperation[]>;
}

export interface OperationsQuery {
  from: Date;
  to: Date;
  after: string | null;
  limit: number;
}

export const OPERATION_TYPES = ['debit', 'refund', 'transfer', 'hold', 'capture', 'release'] as const;
export type OperationType = (typeof OPERATION_TYPES)[number];

export interface RecordedOperation {
  operationId: string;
  type: OperationType;
  amount: number;
  status: 'SUCCEEDED' | 'FAILED';
  executedAt: Date;
}
