// The checkout session state machine, as a table: which call each status allows and where it leads.
import { ApiError } from '../../http/errors.js';

export const SESSION_STATUSES = ['PENDING', 'AWAITING_CODE', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export type SessionCall = 'submit_card' | 'submit_code' | 'resend_code';

type Event = SessionCall | 'debit_succeeded' | 'debit_failed' | 'expire' | 'order_canceled' | 'attempts_used_up';

/** A card binding completes on the right code; an order's session starts the debit and completes with its outcome. */
export const TRANSITIONS: ReadonlyArray<{ kind: 'card_binding' | 'order'; from: SessionStatus; on: Event; to: SessionStatus }> = [
  { kind: 'card_binding', from: 'PENDING', on: 'submit_card', to: 'AWAITING_CODE' },
  { kind: 'card_binding', from: 'AWAITING_CODE', on: 'resend_code', to: 'AWAITING_CODE' },
  { kind: 'card_binding', from: 'AWAITING_CODE', on: 'submit_code', to: 'COMPLETED' },
  { kind: 'card_binding', from: 'PENDING', on: 'expire', to: 'EXPIRED' },
  { kind: 'card_binding', from: 'AWAITING_CODE', on: 'expire', to: 'EXPIRED' },
  { kind: 'card_binding', from: 'PENDING', on: 'attempts_used_up', to: 'FAILED' },
  { kind: 'card_binding', from: 'AWAITING_CODE', on: 'attempts_used_up', to: 'FAILED' },
  { kind: 'order', from: 'PENDING', on: 'submit_card', to: 'AWAITING_CODE' },
  { kind: 'order', from: 'AWAITING_CODE', on: 'resend_code', to: 'AWAITING_CODE' },
  { kind: 'order', from: 'AWAITING_CODE', on: 'submit_code', to: 'PROCESSING' },
  { kind: 'order', from: 'PROCESSING', on: 'debit_succeeded', to: 'COMPLETED' },
  { kind: 'order', from: 'PROCESSING', on: 'debit_failed', to: 'FAILED' },
  { kind: 'order', from: 'PENDING', on: 'expire', to: 'EXPIRED' },
  { kind: 'order', from: 'AWAITING_CODE', on: 'expire', to: 'EXPIRED' },
  { kind: 'order', from: 'PENDING', on: 'order_canceled', to: 'EXPIRED' },
  { kind: 'order', from: 'AWAITING_CODE', on: 'order_canceled', to: 'EXPIRED' },
  { kind: 'order', from: 'PENDING', on: 'attempts_used_up', to: 'FAILED' },
  { kind: 'order', from: 'AWAITING_CODE', on: 'attempts_used_up', to: 'FAILED' },
];

const REFUSALS: Record<SessionCall, string> = {
  submit_card: 'A card can be submitted only before one was accepted',
  submit_code: 'A code can be submitted only after the card was accepted',
  resend_code: 'A code can be resent only after the card was accepted',
};

/** The status a buyer's `call` leads to from `from`, or 409 INVALID_STATE. */
export function transition(kind: 'card_binding' | 'order', from: SessionStatus, call: SessionCall): SessionStatus {
  const found = TRANSITIONS.find((t) => t.kind === kind && t.from === from && t.on === call);
  if (!found) throw new ApiError('INVALID_STATE', `${REFUSALS[call]} (the session is ${from})`);
  return found.to;
}
