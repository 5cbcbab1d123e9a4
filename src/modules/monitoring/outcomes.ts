// What the money paths did, counted for monitoring: charges and refunds as they end, each call to the bank and to the
// fiscal module with its time, each webhook attempt. The counting is behind an interface so that modules stay free of
// the metrics library (the composition root wires it to Prometheus), and every label is from a fixed set here: no
// product, key, card or object id, so the number of series stays bounded.
import type { FiscalModules, Rails } from '../../rails/index.js';
import type { FiscalModule } from '../../rails/fiscal.js';
import type { Rail, RailOutcome } from '../../rails/rail.js';

export type PaymentKind = 'charge' | 'capture' | 'refund';
export type PaymentOutcome = 'succeeded' | 'failed';

/**
 * A call's outcome: `succeeded` (a definite answer that it was done), `failed` (a definite refusal: a declined card, a
 * wrong code, a refused receipt), `unknown` (no certain answer: a timeout, a 5xx, a reset, so it may have been done),
 * `error` (it threw: the call reports its failures as errors, or never left).
 */
export type CallOutcome = 'succeeded' | 'failed' | 'unknown' | 'error';
export type RailOperation = 'tokenize' | 'send_code' | 'verify_code' | 'debit' | 'refund' | 'hold' | 'capture' | 'release' | 'transfer' | 'fence' | 'list';
export type FiscalOperation = 'register' | 'status' | 'fence' | 'list';

/**
 * A webhook attempt's outcome: a 2xx (`succeeded`), another HTTP status (`failed`), no answer within the timeout
 * (`timeout`), no connection (`unreachable`: DNS, refused, TLS, a private address), or not sent (`disabled`: the endpoint
 * was disabled or deleted since).
 */
export type WebhookOutcome = 'succeeded' | 'failed' | 'timeout' | 'unreachable' | 'disabled';

export interface Outcomes {
  /** A charge or refund that ended (each once, when its final status commits). */
  payment(kind: PaymentKind, outcome: PaymentOutcome, livemode: boolean): void;
  railCall(operation: RailOperation, outcome: CallOutcome, livemode: boolean, seconds: number): void;
  fiscalCall(operation: FiscalOperation, outcome: CallOutcome, livemode: boolean, seconds: number): void;
  webhookAttempt(outcome: WebhookOutcome, livemode: boolean): void;
}

/** Counts nothing: for code run where nobody reads the counts (tools, the benchmark's parts). */
export const NO_OUTCOMES: Outcomes = { payment: () => {}, railCall: () => {}, fiscalCall: () => {}, webhookAttempt: () => {} };

type RecordCall = (outcome: CallOutcome, seconds: number) => void;

/** Runs `call`, recording its outcome (read from its value by `outcomeOf`, or `error` when it throws) and its time. */
async function timed<T>(record: RecordCall, call: () => Promise<T>, outcomeOf: (value: T) => CallOutcome): Promise<T> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  try {
    const value = await call();
    record(outcomeOf(value), seconds());
    return value;
  } catch (error) {
    record('error', seconds());
    throw error;
  }
}

/** Whatever a query or a fence answers, the call did its job. */
const answered = (): CallOutcome => 'succeeded';

const LOWER: { [status in RailOutcome['status']]: CallOutcome } = { SUCCEEDED: 'succeeded', FAILED: 'failed', UNKNOWN: 'unknown' };
const moneyOutcome = (outcome: RailOutcome): CallOutcome => LOWER[outcome.status];

function measuredRail(rail: Rail, livemode: boolean, outcomes: Outcomes): Rail {
  const as = (operation: RailOperation): RecordCall => (outcome, seconds) => outcomes.railCall(operation, outcome, livemode, seconds);
  return {
    callWindowMs: rail.callWindowMs,
    tokenize: (card) => timed(as('tokenize'), () => rail.tokenize(card), (result) => (result.ok ? 'succeeded' : 'failed')),
    sendCode: (token) => timed(as('send_code'), () => rail.sendCode(token), answered),
    verifyCode: (token, code) => timed(as('verify_code'), () => rail.verifyCode(token, code), (valid) => (valid ? 'succeeded' : 'failed')),
    debit: (operation) => timed(as('debit'), () => rail.debit(operation), moneyOutcome),
    refund: (operation) => timed(as('refund'), () => rail.refund(operation), moneyOutcome),
    hold: (operation) => timed(as('hold'), () => rail.hold(operation), moneyOutcome),
    capture: (operation) => timed(as('capture'), () => rail.capture(operation), moneyOutcome),
    release: (operation) => timed(as('release'), () => rail.release(operation), moneyOutcome),
    transfer: (operation) => timed(as('transfer'), () => rail.transfer(operation), moneyOutcome),
    fence: (operationId) => timed(as('fence'), () => rail.fence(operationId), answered),
    operations: (query) => timed(as('list'), () => rail.operations(query), answered),
  };
}

function measuredFiscalModule(module: FiscalModule, livemode: boolean, outcomes: Outcomes): FiscalModule {
  const as = (operation: FiscalOperation): RecordCall => (outcome, seconds) => outcomes.fiscalCall(operation, outcome, livemode, seconds);
  const certain = (outcome: { status: string }): CallOutcome => (outcome.status === 'UNKNOWN' ? 'unknown' : 'succeeded');
  return {
    callWindowMs: module.callWindowMs,
    register: (receipt) =>
      timed(as('register'), () => module.register(receipt), (outcome) => (outcome.status === 'REFUSED' ? 'failed' : certain(outcome))),
    status: (id) => timed(as('status'), () => module.status(id), certain),
    fence: (id) => timed(as('fence'), () => module.fence(id), answered),
    registrations: (from, to, limit) => timed(as('list'), () => module.registrations(from, to, limit), answered),
  };
}

/** Each mode's wrapper, made once: a mode's rail (and fiscal module) is one object for the service's life. */
function perMode<T>(wrap: (inner: T, livemode: boolean) => T): (inner: T, livemode: boolean) => T {
  const wrapped = new Map<boolean, T>();
  return (inner, livemode) => {
    const known = wrapped.get(livemode);
    if (known !== undefined) return known;
    const measured = wrap(inner, livemode);
    wrapped.set(livemode, measured);
    return measured;
  };
}

/** The rails, each call counted by operation and outcome and timed. */
export function measuredRails(rails: Rails, outcomes: Outcomes): Rails {
  const measured = perMode<Rail>((rail, livemode) => measuredRail(rail, livemode, outcomes));
  return { forMode: (livemode) => measured(rails.forMode(livemode), livemode) };
}

/** The fiscal modules, each call counted by operation and outcome and timed. */
export function measuredFiscalModules(modules: FiscalModules, outcomes: Outcomes): FiscalModules {
  const measured = perMode<FiscalModule>((module, livemode) => measuredFiscalModule(module, livemode, outcomes));
  return {
    forMode(livemode) {
      const module = modules.forMode(livemode);
      return module === null ? null : measured(module, livemode);
    },
  };
}
