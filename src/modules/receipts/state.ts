// The receipt's state machine: written PENDING once its payment or refund succeeded, it ends once, FISCALIZED when
// the fiscal module registered it or FAILED when it refused it or could not be reached for the whole schedule.
import { StateMachine } from '../../core/state-machine.js';
import type { ReceiptStatus } from './schema.js';

export type ReceiptTrigger = 'registered' | 'refused';

export const RECEIPT_STATES = new StateMachine<ReceiptStatus, ReceiptTrigger>('receipt', [
  { on: 'registered', from: ['PENDING'], to: 'FISCALIZED' },
  { on: 'refused', from: ['PENDING'], to: 'FAILED' },
]);
