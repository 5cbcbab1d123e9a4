// Commands: what a capability does at an actor's request (create a charge, refund a payment, cancel an order, roll a
// webhook secret, …), each run once per idempotency key by the engine. The API's routes and the dashboard's forms are
// both adapters over the same commands: each says who acts and under which key, and gets a typed answer back. A change
// a dashboard user makes is audited in the transaction of the change itself.
import type { Db, Transaction } from '../db/types.js';
import type { Sealer } from '../lib/sealing.js';
import { ApiError, type ErrorBody } from './errors.js';
import { runIdempotent, type IdempotentRequest, type PhaseHooks, type PhaseResult, type Step, type Steps } from './idempotency.js';
import { assertActive, type Merchant } from './merchant.js';

/** One call of a command: on which product and mode, by whom (`scope.actor`), under which key, as which request. */
export interface Invocation {
  scope: Merchant;
  /** The Idempotency-Key (the dashboard's: its form's), or null to run without one. */
  key: string | null;
  /** What recognises the call again under its key: its method, path and input, and its id for an error's body. */
  request: IdempotentRequest;
  hooks?: PhaseHooks;
}

/** An entry of the account's audit log: a dashboard user's change. */
export interface AuditEntry {
  accountId: string;
  userId: string;
  livemode: boolean;
  action: string;
  target: string;
}

/** Where audit entries are written, in the transaction of the change they record. */
export interface AuditTrail {
  record(tx: Transaction, entry: AuditEntry): Promise<void>;
}

/** A command's answer: its status, its JSON as stored and sent, and its value or error, typed. */
export type Answer<T> = { status: number; replayed: boolean; json: string } & ({ ok: true; value: T } | { ok: false; error: ErrorBody });

/** The first phase of a command that a suspended product may not run, refusing it first. */
function activeOnly(scope: Merchant, started: Step | undefined): Step | undefined {
  if (typeof started !== 'function') return started;
  return (tx, resourceId) => {
    assertActive(scope);
    return started(tx, resourceId);
  };
}

/** An audit target read from the first phase's answer: only a one-phase command has one there. */
function targetOf(read: (answer: never) => string, result: PhaseResult): string {
  if (!('response' in result)) throw new Error('an audit target read from the answer needs a command of one phase');
  return read(result.response.body as never);
}

/** A command's value, or its refusal thrown again as the error it was (for adapters that show errors as they come). */
export function valueOf<T>(answer: Answer<T>): T {
  if (answer.ok) return answer.value;
  const { code, message, param, failureCode } = answer.error;
  throw new ApiError(code, message, { ...(param === undefined ? {} : { param }), ...(failureCode === undefined ? {} : { failureCode }) });
}

export interface CommandOptions {
  /** The audit entry of a change, written when a dashboard user makes it; its target may be read from the answer. */
  audit?: { action: string; target: string | ((answer: never) => string) };
  /** The answer carries a secret: stored sealed, as the secret itself is, so the table of answers does not give it away. */
  secret?: boolean;
  /**
   * The command moves money, binds a card or makes an order: a suspended product is refused 403 PRODUCT_SUSPENDED in
   * its first phase (a refusal stored under the key like any other, so that a replay answers the same).
   */
  activeOnly?: boolean;
}

export class Commands {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditTrail,
    private readonly sealer: Sealer,
  ) {}

  async run<T>(invocation: Invocation, steps: Steps, options: CommandOptions = {}): Promise<Answer<T>> {
    const { scope, key, request, hooks } = invocation;
    const first = this.withAudit(scope, options.activeOnly ? activeOnly(scope, steps.started) : steps.started, options.audit);
    // Only a stored answer is sealed: without a key nothing is stored.
    const sealing = options.secret === true && key !== null;
    const all = sealing ? this.sealed({ ...steps, started: first }) : { ...steps, started: first };
    const sent = await runIdempotent(this.db, scope, key, request, all, hooks);
    const json = sealing && sent.status < 400 ? this.sealer.open((JSON.parse(sent.body) as { sealed: string }).sealed) : sent.body;
    const parsed = JSON.parse(json) as unknown;
    const answered = { status: sent.status, replayed: sent.replayed, json };
    return sent.status < 400 ? { ...answered, ok: true, value: parsed as T } : { ...answered, ok: false, error: parsed as ErrorBody };
  }

  /** One change as a command of one phase: `write` in its own transaction, its value the answer with `status`. */
  change<T>(invocation: Invocation, status: number, write: (tx: Transaction) => Promise<T>, options: CommandOptions = {}): Promise<Answer<T>> {
    return this.run<T>(invocation, { started: async (tx) => ({ response: { status, body: await write(tx) } }) }, options);
  }

  /** The first phase, which makes the change, with the user's audit entry written in its transaction. */
  private withAudit(scope: Merchant, started: Step | undefined, audit: CommandOptions['audit']): Step {
    if (typeof started !== 'function') throw new Error('a command starts with an atomic phase');
    const { actor } = scope;
    if (audit === undefined || actor.kind !== 'user') return started;
    return async (tx, resourceId) => {
      const result = await started(tx, resourceId);
      const target = typeof audit.target === 'string' ? audit.target : targetOf(audit.target, result);
      await this.audit.record(tx, { accountId: actor.accountId, userId: actor.userId, livemode: scope.livemode, action: audit.action, target });
      return result;
    };
  }

  /** Atomic phases whose successful answers are stored as `{"sealed": …}`, the answer's JSON sealed. */
  private sealed(steps: Steps): Steps {
    const seal = (step: Step): Step => {
      if (typeof step !== 'function') throw new Error('only atomic phases answer with a secret');
      return async (tx, resourceId) => {
        const result = await step(tx, resourceId);
        if (!('response' in result) || result.response.status >= 400) return result;
        return { response: { ...result.response, body: { sealed: this.sealer.seal(JSON.stringify(result.response.body)) } } };
      };
    };
    return Object.fromEntries(Object.entries(steps).map(([name, step]) => [name, seal(step)]));
  }
}
