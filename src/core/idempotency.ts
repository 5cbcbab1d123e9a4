// Idempotency keys with atomic phases and recovery points (after brandur/rocket-rides-atomic).
//
// A request runs as a sequence of steps named by recovery points, starting at `started`. An atomic phase is a plain
// function over a transaction, which commits together with the key's move to the phase's result; a foreign call (the
// bank) runs outside any transaction, between two commits. A new key is claimed by the first phase's transaction, which
// inserts it with that phase's result: the phase's writes and the key commit together, or neither does, and when two
// requests race for one key the key's unique index lets exactly one commit. A crash leaves the key at the last committed
// recovery point, and a retry continues from there instead of starting again.
import { randomUUID } from 'node:crypto';
import { isUniqueViolation, refusedAs, type Db, type Transaction } from '../db/types.js';
import { canonicalJson } from '../lib/canonical-json.js';
import { sha256 } from '../lib/secrets.js';
import { actorName, type Merchant } from './merchant.js';
import { ApiError } from './errors.js';

/**
 * A running request renews its key's lock every IDEMPOTENCY_LOCK_RENEW_MS; a lock not renewed for this long belongs to
 * a request whose process died, and a retry may resume it.
 */
export const IDEMPOTENCY_LOCK_TIMEOUT_MS = 10_000;
const IDEMPOTENCY_LOCK_RENEW_MS = 3_000;
/** Keys renewed by one statement; a process holding more renews them in several. */
const RENEW_BATCH_MAX = 1_000;
/** Renewals of a process sent and not yet answered. */
const RENEWALS_IN_FLIGHT_MAX = 2;
const START = 'started';
const FINISHED = 'finished';

export interface Response {
  status: number;
  body: unknown;
}

/**
 * What a phase decided: continue at another recovery point (with what it created, and what the next step's foreign
 * call may use without reading it again: `carried`, kept in memory only), or finish with a response.
 */
export type PhaseResult = { next: string; resourceId?: string; carried?: unknown } | { response: Response };

/** An atomic phase: its writes, in `tx`, commit together with the key's move to its result. */
export type AtomicPhase = (tx: Transaction, resourceId: string | null) => Promise<PhaseResult>;

/**
 * A call to the outside world, outside any transaction, then the atomic record of what it answered. A request that
 * resumes at a foreign call after a crash does not call again (the first call may have gone through): it answers from
 * what is recorded (`resume`), leaving the rest to reconciliation.
 */
export interface ForeignCall<T> {
  /** `carried` is what the step before handed on: a call always follows it in the same process (a resumed one never calls). */
  call: (resourceId: string | null, carried: unknown) => Promise<T>;
  record: (tx: Transaction, resourceId: string | null, called: T) => Promise<PhaseResult>;
  resume: AtomicPhase;
}

export type Step = AtomicPhase | ForeignCall<unknown>;
export type Steps = Record<string, Step>;

export const foreignCall = <T>(step: ForeignCall<T>): Step => step as ForeignCall<unknown>;

/** Fault injection and timing, each called with a recovery point; a hook that throws acts as a crash there. */
export interface PhaseHooks {
  /** After a step committed and the key reached this point. */
  afterCommit?: (recoveryPoint: string) => void;
  /** After the foreign call of the step at this point returned, before its outcome is recorded. */
  afterCall?: (recoveryPoint: string) => void;
}

export interface SentResponse {
  status: number;
  body: string;
  replayed: boolean;
}

/** The request a key names: its id (which an error's body carries), and what recognises it again. */
export interface IdempotentRequest {
  id: string;
  method: string;
  path: string;
  body: unknown;
}

/** A key, what it names, and the token of this request's hold on it (a new one at each claim or takeover). */
interface Owner {
  merchant: Merchant;
  key: string;
  request: IdempotentRequest;
  token: string;
}

/**
 * Where a request stands: its recovery point, what it created, whether it took over a key left by another, and whether
 * the key's row is written (a new key's is written by its first phase).
 */
interface Progress {
  point: string;
  resourceId: string | null;
  resumed: boolean;
  keyed: boolean;
  carried?: unknown;
}

/** The same request always hashes the same: its body as canonical JSON. */
const hashOf = (request: IdempotentRequest) => sha256(`${request.method} ${request.path}\n${canonicalJson(request.body ?? null)}`);
const KEY = 'product_id = $1 AND livemode = $2 AND key = $3';
const keyParams = ({ merchant, key }: Pick<Owner, 'merchant' | 'key'>) => [merchant.productId, merchant.livemode, key];
/** The key as this request holds it, unanswered: `$4` is the token. */
const HELD = `${KEY} AND lock_token = $4 AND response_status IS NULL`;
const heldParams = (owner: Owner) => [...keyParams(owner), owner.token];

/** The key this request held was taken over by another, after its lock lapsed: this request's writes must not count. */
class KeyLost extends Error {}

/** A key this request would have claimed exists already: what its first phase wrote rolled back, and the key decides. */
class KeyExists extends Error {}

interface KeyRow {
  api_key_id: string | null;
  request_method: string;
  request_path: string;
  request_hash: Buffer;
  recovery_point: string;
  resource_id: string | null;
  response_status: number | null;
  response_body: string | null;
  locked: boolean;
}

/** A key that exists: its answer replayed, a refusal, or its request resumed where a crashed process left it. */
function claimExisting(db: Db, owner: Owner): Promise<Progress | SentResponse> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<KeyRow>(
      `SELECT api_key_id, request_method, request_path, request_hash, recovery_point, resource_id, response_status, response_body,
              (locked_at IS NOT NULL AND locked_at > now() - $4 * interval '1 millisecond') AS locked
         FROM idempotency_keys WHERE ${KEY} FOR UPDATE`,
      [...keyParams(owner), IDEMPOTENCY_LOCK_TIMEOUT_MS],
    );
    // Deleted since this request found it (past its retention): free again at the retry.
    if (!row) throw new ApiError('IDEMPOTENCY_KEY_IN_USE', 'This Idempotency-Key is being released; retry in a moment');
    return takeOver(tx, owner, row, hashOf(owner.request));
  });
}

/** An existing key: its answer replayed, a refusal, or its request resumed where a crashed process left it. */
async function takeOver(tx: Transaction, owner: Owner, row: KeyRow, hash: Buffer): Promise<Progress | SentResponse> {
  const { merchant, request } = owner;
  // Another API key of the product never gets this key's answer, which may hold a secret only its maker may see.
  if (row.api_key_id !== null && row.api_key_id !== actorName(merchant.actor)) {
    throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used by another API key of this product');
  }
  if (row.request_method !== request.method || row.request_path !== request.path || !row.request_hash.equals(hash)) {
    throw new ApiError('IDEMPOTENCY_KEY_REUSED', `This Idempotency-Key was already used for ${row.request_method} ${row.request_path} with other parameters`);
  }
  if (row.response_status !== null) return { status: row.response_status, body: row.response_body!, replayed: true };
  if (row.locked) throw new ApiError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still in progress; retry later');
  tx.write(`UPDATE idempotency_keys SET locked_at = clock_timestamp(), lock_token = $4 WHERE ${KEY}`, heldParams(owner));
  return { point: row.recovery_point, resourceId: row.resource_id, resumed: true, keyed: true };
}

/** Where a step left the request: at another recovery point, or answered (its body serialized once, as stored and sent). */
type Moved = Exclude<PhaseResult, { response: Response }> | SentResponse;

const movedBy = (result: PhaseResult): Moved =>
  'response' in result ? { status: result.response.status, body: JSON.stringify(result.response.body), replayed: false } : result;

/** The key's columns for a step's move: the recovery point, the resource, the stored response. */
function keyValues(result: Moved, resourceId: string | null): [string, string | null, number | null, string | null] {
  if ('next' in result) return [result.next, result.resourceId ?? resourceId, null, null];
  return [FINISHED, resourceId, result.status, result.body];
}

/** The SQLSTATE of a key's move refused because this request no longer holds the key (migration 034). */
const KEY_NOT_HELD = 'TK001';

/**
 * Claims a new key at its first write, in the first phase's transaction (or with a refusal as its answer): locked to
 * this request while unanswered. Sent with the COMMIT: when another request committed the key already, the insert
 * fails, and the transaction with it (KeyExists, once `keyFailure` reads the error).
 */
function insertKey(tx: Transaction, owner: Owner, result: Moved): void {
  const { merchant, request } = owner;
  tx.write(
    `INSERT INTO idempotency_keys (product_id, livemode, key, request_method, request_path, request_hash, api_key_id,
            recovery_point, resource_id, response_status, response_body, locked_at, lock_token)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, CASE WHEN $10::integer IS NULL THEN clock_timestamp() END, CASE WHEN $10::integer IS NULL THEN $12 END)`,
    [...keyParams(owner), request.method, request.path, hashOf(request), actorName(merchant.actor), ...keyValues(result, null), owner.token],
  );
}

/** The key's move, built once (a text built at each call is hashed again where its prepared name is looked up). */
const MOVE_KEY = `WITH moved AS (
       UPDATE idempotency_keys SET recovery_point = $5, resource_id = $6, response_status = $7, response_body = $8,
              locked_at = CASE WHEN $7::integer IS NULL THEN clock_timestamp() END, lock_token = CASE WHEN $7::integer IS NULL THEN lock_token END
        WHERE ${HELD} RETURNING 1)
     SELECT idempotency_key_held(count(*)) FROM moved`;

/**
 * The key's move to a phase's result (the lock renewed), or to its answer (the lock released), once its row is written.
 * Only while this request holds it: otherwise the statement fails (KeyLost, once `keyFailure` reads the error), and the
 * transaction with it.
 */
function writeKey(tx: Transaction, owner: Owner, result: Moved, resourceId: string | null): void {
  tx.write(MOVE_KEY, [...heldParams(owner), ...keyValues(result, resourceId)]);
}

/** Writes the key with a step's result or an answer, in `tx`: its claim if its row is not written yet, its move if it is. */
function recordOnKey(tx: Transaction, owner: Owner, at: Progress, result: Moved): void {
  if (at.keyed) writeKey(tx, owner, result, at.resourceId);
  else insertKey(tx, owner, result);
}

/** What the failure of a transaction that wrote the key means for the key: KeyExists, KeyLost, or the failure itself. */
function keyFailure(error: unknown, owner: Owner): unknown {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  if (isUniqueViolation(error) && constraint === 'idempotency_keys_pkey') return new KeyExists(`idempotency key ${owner.key} exists`);
  if (code === KEY_NOT_HELD) return new KeyLost(`idempotency key ${owner.key} was taken over by another request`);
  return error;
}

/** Runs `write` in a transaction that records the key's move with it, its failure read for what it means for the key. */
function withKey<T>(db: Db, owner: Owner, write: (tx: Transaction) => Promise<T>): Promise<T> {
  return db.transaction((tx) => {
    refusedAs(tx, (error) => keyFailure(error, owner));
    return write(tx);
  });
}

/** One request's run through its steps; `owner` is null for a request without a key. */
interface Run {
  db: Db;
  owner: Owner | null;
  steps: Steps;
  hooks: PhaseHooks;
}

/** Runs `phase` in a transaction with the key's move to its result. */
function committed({ db, owner }: Run, at: Progress, phase: (tx: Transaction) => Promise<PhaseResult>): Promise<Moved> {
  if (!owner) return db.transaction(async (tx) => movedBy(await phase(tx)));
  return withKey(db, owner, async (tx) => {
    const result = movedBy(await phase(tx));
    recordOnKey(tx, owner, at, result);
    return result;
  });
}

/** Runs the step at `at`: an atomic phase, or a foreign call then its record (only what is recorded, when resumed). */
async function runStep(run: Run, at: Progress): Promise<Moved> {
  const step = run.steps[at.point];
  if (!step) throw new Error(`no step for recovery point ${at.point}`);
  if (typeof step === 'function') return committed(run, at, (tx) => step(tx, at.resourceId));
  if (at.resumed) return committed(run, at, (tx) => step.resume(tx, at.resourceId));
  const called = await step.call(at.resourceId, at.carried);
  run.hooks.afterCall?.(at.point);
  return committed(run, at, (tx) => step.record(tx, at.resourceId, called));
}

/** Runs the steps from where the key stands until one answers; `moved` learns each recovery point committed. */
async function runFrom(run: Run, start: Progress, moved: (at: Progress) => void = () => {}): Promise<SentResponse> {
  const stepsMax = Object.keys(run.steps).length;
  let at = start;
  // Each step either finishes or moves on; more steps than there are would mean a cycle, a bug.
  for (let count = 0; count < stepsMax; count++) {
    const result = await runStep(run, at);
    if (!('next' in result)) {
      run.hooks.afterCommit?.(FINISHED);
      return result;
    }
    at = { point: result.next, resourceId: result.resourceId ?? at.resourceId, resumed: false, keyed: true, carried: result.carried };
    moved(at);
    run.hooks.afterCommit?.(at.point);
  }
  throw new Error(`idempotent request did not finish within ${stepsMax} steps`);
}

/** Refusals that are not the request's answer, which any retry should meet again: a body the API could not take, a busy key. */
const UNSTORED_REFUSALS = new Set(['VALIDATION_ERROR', 'RATE_LIMITED', 'IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED']);

/**
 * After a step threw: a business refusal is stored as the key's answer, and sent. Anything else releases the key and
 * goes on, as a 5xx that a retry may resume. A request whose key was taken over touches it no more, and says the key is
 * in use: its retry meets the other's answer. A request that had not written its key yet, and finds it written by
 * another (a retry whose first phase failed against what the first request changed), leaves the answer to the key.
 */
async function settle({ db }: Run, owner: Owner, error: unknown, at: Progress): Promise<SentResponse> {
  if (error instanceof KeyLost) throw keyTakenOver();
  if (error instanceof KeyExists) throw error;
  if (error instanceof ApiError && error.statusCode < 500 && !UNSTORED_REFUSALS.has(error.code)) {
    const sent = { status: error.statusCode, body: JSON.stringify(error.body(owner.request.id)), replayed: false };
    try {
      await withKey(db, owner, async (tx) => recordOnKey(tx, owner, at, sent));
      return sent;
    } catch (failed) {
      throw failed instanceof KeyLost ? keyTakenOver() : failed;
    }
  }
  if (!at.keyed) {
    if ((await db.query(`SELECT 1 FROM idempotency_keys WHERE ${KEY}`, keyParams(owner))).length > 0) throw new KeyExists(`idempotency key ${owner.key} exists`);
    throw error;
  }
  await db.query(`UPDATE idempotency_keys SET locked_at = NULL, lock_token = NULL WHERE ${HELD}`, heldParams(owner)).catch(() => {});
  throw error;
}

const keyTakenOver = () => new ApiError('IDEMPOTENCY_KEY_IN_USE', 'Another request with this Idempotency-Key took it over; retry to get its answer');

/** Runs `run`'s steps from `start` until one answers, and settles a step that threw. */
async function runHolding(run: Run & { owner: Owner }, start: Progress): Promise<SentResponse> {
  let at = start;
  try {
    return await runFrom(run, start, (moved) => (at = moved));
  } catch (error) {
    return await settle(run, run.owner, error, at);
  }
}

/**
 * Runs `steps` once per (product, mode, key): a repeated request gets the stored response, a request with other
 * parameters 422, a request while the first still runs 409. Thrown errors (5xx) are not stored and release the key.
 * A new key costs no statement of its own: its first phase writes it. Without a key (optional on that route) the steps
 * simply run in order.
 */
export async function runIdempotent(db: Db, merchant: Merchant, key: string | null, request: IdempotentRequest, steps: Steps, hooks: PhaseHooks = {}): Promise<SentResponse> {
  if (key === null) return runSteps(db, steps, hooks);
  const owner = { merchant, key, request, token: randomUUID() };
  const run = { db, owner, steps, hooks };
  const stopRenewing = renewLock(db, owner);
  try {
    try {
      return await runHolding(run, { point: START, resourceId: null, resumed: false, keyed: false });
    } catch (error) {
      if (!(error instanceof KeyExists)) throw error;
    }
    const existing = await claimExisting(db, owner);
    return 'replayed' in existing ? existing : await runHolding(run, existing);
  } finally {
    stopRenewing();
  }
}

/** Runs `steps` in order for a caller without an idempotency key (the buyer's hosted page). */
export function runSteps(db: Db, steps: Steps, hooks: PhaseHooks = {}): Promise<SentResponse> {
  return runFrom({ db, owner: null, steps, hooks }, { point: START, resourceId: null, resumed: false, keyed: false });
}

/**
 * The locks of the keys this process's requests hold, renewed together every IDEMPOTENCY_LOCK_RENEW_MS while any is
 * held: one statement for up to RENEW_BATCH_MAX keys, where a timer per request would send one per key. A thousand
 * charges waiting on a slow bank, or queued behind a busy database, then cost one renewal, not a thousand. A renewal
 * changes nothing once its request released the key.
 */
class LockRenewals {
  readonly #held = new Set<Owner>();
  #timer: NodeJS.Timeout | null = null;
  #renewing = 0;

  constructor(private readonly db: Db) {}

  /** Renews `owner`'s lock until the returned function is called. */
  hold(owner: Owner): () => void {
    this.#held.add(owner);
    if (this.#timer === null) {
      this.#timer = setInterval(() => void this.#renew(), IDEMPOTENCY_LOCK_RENEW_MS);
      this.#timer.unref();
    }
    return () => {
      this.#held.delete(owner);
      if (this.#held.size > 0 || this.#timer === null) return;
      clearInterval(this.#timer);
      this.#timer = null;
    };
  }

  async #renew(): Promise<void> {
    // A renewal still waiting when the next is due (a busy database) gets one successor queued behind it, never more:
    // each lock is renewed within the interval of the database's answer, without renewals piling up.
    if (this.#renewing >= RENEWALS_IN_FLIGHT_MAX) return;
    this.#renewing += 1;
    try {
      const held = [...this.#held];
      for (let at = 0; at < held.length; at += RENEW_BATCH_MAX) {
        const batch = held.slice(at, at + RENEW_BATCH_MAX);
        await this.db
          .query(
            `UPDATE idempotency_keys k SET locked_at = now()
               FROM unnest($1::text[], $2::boolean[], $3::text[], $4::text[]) AS h (product_id, livemode, key, lock_token)
              WHERE k.product_id = h.product_id AND k.livemode = h.livemode AND k.key = h.key AND k.lock_token = h.lock_token
                AND k.response_status IS NULL`,
            [batch.map((o) => o.merchant.productId), batch.map((o) => o.merchant.livemode), batch.map((o) => o.key), batch.map((o) => o.token)],
          )
          .catch(() => {});
      }
    } finally {
      this.#renewing -= 1;
    }
  }
}

const renewals = new WeakMap<Db, LockRenewals>();

/** Renews the lock of a key this request holds until the returned function is called, with the process's other keys. */
function renewLock(db: Db, owner: Owner): () => void {
  let locks = renewals.get(db);
  if (!locks) renewals.set(db, (locks = new LockRenewals(db)));
  return locks.hold(owner);
}
