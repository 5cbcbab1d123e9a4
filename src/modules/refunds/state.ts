// The refund's state machine: made PENDING with its operation id, it ends once with the bank's answer.
import { StateMachine } from '../../core/state-machine.js';
import type { RefundStatus } from './schema.js';

export type RefundTrigger = 'refund_succeeded' | 'refund_failed';

export const REFUND_STATES = new StateMachine<RefundStatus, RefundTrigger>('refund', [
  { on: 'refund_succeeded', from: ['PENDING'], to: 'SUCCEEDED' },
  { on: 'refund_failed', from: ['PENDING'], to: 'FAILED' },
]);
