// The payment intent's state machine. A charge is made PROCESSING, a legacy create REQUIRES_PAYMENT; from there only
// these moves exist.
import { StateMachine } from '../../core/state-machine.js';
import type { IntentStatus } from './schema.js';

export type IntentTrigger = 'confirm' | 'cancel' | 'debit_succeeded' | 'debit_failed';

export const INTENT_STATES = new StateMachine<IntentStatus, IntentTrigger>('payment intent', [
  { on: 'confirm', from: ['REQUIRES_PAYMENT'], to: 'PROCESSING' },
  { on: 'cancel', from: ['REQUIRES_PAYMENT'], to: 'CANCELED' },
  { on: 'debit_succeeded', from: ['PROCESSING'], to: 'SUCCEEDED' },
  { on: 'debit_failed', from: ['PROCESSING'], to: 'FAILED' },
]);
