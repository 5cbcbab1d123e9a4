// The payment intent's state machine. A charge is made PROCESSING, a legacy create REQUIRES_PAYMENT; from there only
// these moves exist. A two-step payment's hold ends in REQUIRES_CAPTURE; its capture or release runs PROCESSING again
// (the store tells the two PROCESSING phases apart by `held_at`).
import { StateMachine } from '../../core/state-machine.js';
import type { IntentStatus } from './schema.js';

export type IntentTrigger =
  | 'confirm'
  | 'cancel'
  | 'debit_succeeded'
  | 'debit_failed'
  | 'hold_succeeded'
  | 'hold_ending'
  | 'capture_succeeded'
  | 'hold_kept'
  | 'hold_released';

export const INTENT_STATES = new StateMachine<IntentStatus, IntentTrigger>('payment intent', [
  { on: 'confirm', from: ['REQUIRES_PAYMENT'], to: 'PROCESSING' },
  { on: 'cancel', from: ['REQUIRES_PAYMENT'], to: 'CANCELED' },
  { on: 'debit_succeeded', from: ['PROCESSING'], to: 'SUCCEEDED' },
  { on: 'debit_failed', from: ['PROCESSING'], to: 'FAILED' },
  { on: 'hold_succeeded', from: ['PROCESSING'], to: 'REQUIRES_CAPTURE' },
  // A capture or release is under way at the bank.
  { on: 'hold_ending', from: ['REQUIRES_CAPTURE'], to: 'PROCESSING' },
  { on: 'capture_succeeded', from: ['PROCESSING'], to: 'SUCCEEDED' },
  // The bank refused the capture or release without ending the hold: it can be captured or canceled again.
  { on: 'hold_kept', from: ['PROCESSING'], to: 'REQUIRES_CAPTURE' },
  { on: 'hold_released', from: ['PROCESSING'], to: 'CANCELED' },
]);
