// The checkout session state machine, as a table: which event moves a session of which kind from which statuses to
// which. The store writes every status change from this table (`… WHERE status = ANY(<from>)`), and the buyer's calls
// are refused from it, so the table is the whole of the machine.

import type { SessionStatus } from '../../core/session-statuses.js';

export type { SessionStatus } from '../../core/session-statuses.js';
export type SessionKind = 'order' | 'card_binding';

/** The buyer's calls on the hosted page. */
export type SessionCall = 'submit_card' | 'submit_code' | 'resend_code';

/** What moves a session: a buyer's call, its order's outcome or close, its time running out, or its attempts used up. */
export type SessionEvent = SessionCall | 'debit_succeeded' | 'debit_failed' | 'order_closed' | 'expire' | 'attempts_used_up';

interface Move {
  kinds: readonly SessionKind[];
  on: SessionEvent;
  from: readonly SessionStatus[];
  to: SessionStatus;
}

const BOTH: readonly SessionKind[] = ['order', 'card_binding'];
const OPEN: readonly SessionStatus[] = ['PENDING', 'AWAITING_CODE'];
/** An order's session that has not reached a final status. */
const UNFINISHED: readonly SessionStatus[] = ['PENDING', 'AWAITING_CODE', 'PROCESSING'];

/** A card binding completes on the right code; an order's session starts the debit and completes with its outcome. */
const MOVES: readonly Move[] = [
  { kinds: BOTH, on: 'submit_card', from: ['PENDING'], to: 'AWAITING_CODE' },
  { kinds: BOTH, on: 'resend_code', from: ['AWAITING_CODE'], to: 'AWAITING_CODE' },
  { kinds: ['card_binding'], on: 'submit_code', from: ['AWAITING_CODE'], to: 'COMPLETED' },
  { kinds: ['order'], on: 'submit_code', from: ['AWAITING_CODE'], to: 'PROCESSING' },
  // A payment that succeeds after its session expired (the bank answered late) still completes it.
  { kinds: ['order'], on: 'debit_succeeded', from: [...UNFINISHED, 'EXPIRED'], to: 'COMPLETED' },
  { kinds: ['order'], on: 'debit_failed', from: UNFINISHED, to: 'FAILED' },
  { kinds: ['order'], on: 'order_closed', from: UNFINISHED, to: 'EXPIRED' },
  { kinds: BOTH, on: 'expire', from: OPEN, to: 'EXPIRED' },
  { kinds: BOTH, on: 'attempts_used_up', from: OPEN, to: 'FAILED' },
];

/** The table's row for `on` in a session of `kind`; every event the code raises has one. */
export function moveOf(kind: SessionKind, on: SessionEvent): Move {
  const move = MOVES.find((row) => row.on === on && row.kinds.includes(kind));
  if (!move) throw new Error(`no move on ${on} for a ${kind} session`);
  return move;
}

const REFUSALS: Record<SessionCall, string> = {
  submit_card: 'A card can be submitted only before one was accepted',
  submit_code: 'A code can be submitted only after the card was accepted',
  resend_code: 'A code can be resent only after the card was accepted',
};

/** Why the buyer's `call` is refused in a session at `from`, or null when the table allows it. */
export function refusalOf(kind: SessionKind, from: SessionStatus, call: SessionCall): string | null {
  return moveOf(kind, call).from.includes(from) ? null : `${REFUSALS[call]} (the session is ${from})`;
}
