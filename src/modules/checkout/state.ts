// The checkout session state machine, as a table: which call each status allows and where it leads.
import { ApiError } from '../../http/errors.js';

export const SESSION_STATUSES = ['PENDING', 'AWAITING_CODE', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export type SessionCall = 'submit_card' | 'submit_code' | 'resend_code';

/** Statuses a session can still leave by a buyer's action or by expiry. */
export const OPEN_STATUSES: readonly SessionStatus[] = ['PENDING', 'AWAITING_CODE'];

export const TRANSITIONS: ReadonlyArray<{ from: SessionStatus; call: SessionCall | 'expire'; to: SessionStatus }> = [
  { from: 'PENDING', call: 'submit_card', to: 'AWAITING_CODE' },
  { from: 'AWAITING_CODE', call: 'resend_code', to: 'AWAITING_CODE' },
  { from: 'AWAITING_CODE', call: 'submit_code', to: 'COMPLETED' },
  { from: 'PENDING', call: 'expire', to: 'EXPIRED' },
  { from: 'AWAITING_CODE', call: 'expire', to: 'EXPIRED' },
];

const REFUSALS: Record<SessionCall, string> = {
  submit_card: 'A card can be submitted only before one was accepted',
  submit_code: 'A code can be submitted only after the card was accepted',
  resend_code: 'A code can be resent only after the card was accepted',
};

/** The status `call` leads to from `from`, or 409 INVALID_STATE. */
export function transition(from: SessionStatus, call: SessionCall): SessionStatus {
  const found = TRANSITIONS.find((t) => t.from === from && t.call === call);
  if (!found) throw new ApiError('INVALID_STATE', `${REFUSALS[call]} (the session is ${from})`);
  return found.to;
}
