// Idempotency keys with atomic phases and recovery points (after Brandur Leach's rocket-rides-atomic).
//
// A request is a sequence of phases named by recovery points, starting at `started`. Each phase runs in its own
// transaction together with the update of the key row, so a crash between phases leaves the key at the last
// committed recovery point and a retry continues from there instead of starting again. Claiming the key shares
// the first phase's transaction: a request that fails before its first commit leaves nothing behind.
import type { Db, Queryable, Transaction } from '../db/types.js';
import { guarded, Statement, type Items } from './statement.js';
import { sha256 } from '../lib/secrets.js';
import type { Merchant } from '../core/merchant.js';
import { ApiError } from './errors.js';

/**
 * A running request renews its key's lock every IDEMPOTENCY_LOCK_RENEW_MS; a lock not renewed for this long belongs to
 * a request whose process died, and a retry may resume it.
 */
export const IDEMPOTENCY_LOCK_TIMEOUT_MS = 10_000;
const IDEMPOTENCY_LOCK_RENEW_MS = 3_000;
const IDEMPOTENCY_RETENTION_HOURS = 24;
const START = 'started';
const FINISHED = 'finished';

export interface IdempotencyKeyRow {
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

export interface Response {
  status: number;
  body: unknown;
}

/** What a phase decided: continue at another recovery point, or finish with a response to store. */
export type PhaseResult = { next: string; resourceId?: string } | { response: Response };

/**
 * A phase's write of its key, as data: a statement may write the keys of many requests' phases at once
 * (`addKeyWrites`). The first phase claims the key (inserts its row, or nothing if the key exists); a later one
 * advances it from where it is.
 */
export interface KeyWrite {
  kind: 'claim' | 'advance';
  productId: string;
  livemode: boolean;
  key: string;
  /** What a claim stores to recognise the request again, and the API key that made it; an advance has none. */
  request: { method: string; path: string; hash: Buffer; apiKeyId: string } | null;
  /** What earlier phases created (a claim has none). */
  resourceId: string | null;
}

/**
 * A step of a request. An atomic phase's writes and the key's new recovery point commit together. A foreign phase
 * calls the outside world (the bank) outside any transaction, then records what it learnt atomically; a request that
 * resumes at a foreign phase after a crash does not call again (the first call may have gone through) and answers
 * from what is recorded, leaving the rest to reconciliation. `resourceId` is what earlier phases created.
 */
export type Phase = PlainPhase | WrittenPhase | ForeignPhase<unknown>;

/** An atomic phase run in a transaction, after which the engine writes its key in the same transaction. */
export interface PlainPhase {
  atomic: (tx: Transaction, resourceId: string | null) => Promise<PhaseResult>;
}

/**
 * An atomic phase whose writes are one statement (a `PhaseWriter`'s), written once and run two ways. Outside a
 * transaction (`tx` null) the statement also carries the key's write (`key`: a first phase's claim, which writes
 * nothing if the key exists; null without a key), and answers null, having written nothing, whenever it cannot write:
 * the request then takes the transaction. In a transaction the engine writes the key after it, and null means the
 * phase refused: `refuse` throws why.
 */
export interface WrittenPhase {
  write: (tx: Transaction | null, key: KeyWrite | null, resourceId: string | null) => Promise<PhaseResult | null>;
  refuse: (tx: Transaction, resourceId: string | null) => Promise<never>;
}

/** A call outside any transaction, then its record: written as a written phase is (`tx` null), or in a transaction. */
export interface ForeignPhase<T> {
  call: (resourceId: string | null) => Promise<T>;
  record: (tx: Transaction | null, resourceId: string | null, called: T, key: KeyWrite | null) => Promise<PhaseResult | null>;
  resume: (tx: Transaction, resourceId: string | null) => Promise<PhaseResult>;
}

export const foreignPhase = <T>(phase: ForeignPhase<T>): Phase => phase as ForeignPhase<unknown>;

/** Fault injection for tests, each called with a recovery point and allowed to throw, as a crash there would. */
export interface PhaseHooks {
  /** After a phase committed and the key reached this point. */
  afterCommit?: (recoveryPoint: string) => void;
  /** After the foreign call of the phase at this point returned, before its outcome is recorded. */
  afterCall?: (recoveryPoint: string) => void;
}

export interface SentResponse {
  status: number;
  body: string;
  replayed: boolean;
}

export interface IdempotentRequest {
  /** The request's id, which an error's body carries. */
  id: string;
  method: string;
  path: string;
  body: unknown;
}

/** JSON with object keys sorted, so that the same request always hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const KEY_COLUMNS = `api_key_id, request_method, request_path, request_hash, recovery_point, resource_id, response_status, response_body`;

const hashOf = (request: IdempotentRequest) => sha256(`${request.method} ${request.path}\n${canonicalJson(request.body ?? null)}`);

async function claim(tx: Transaction, merchant: Merchant, key: string, request: IdempotentRequest): Promise<IdempotencyKeyRow | SentResponse> {
  const hash = hashOf(request);
  const [created] = await tx.query<IdempotencyKeyRow>(
    `INSERT INTO idempotency_keys (product_id, livemode, key, request_method, request_path, request_hash, recovery_point, locked_at, api_key_id)
     VALUES ($1, $2, $3, $4, $5, $6, '${START}', now(), $7)
     ON CONFLICT (product_id, livemode, key) DO NOTHING
     RETURNING ${KEY_COLUMNS}, false AS locked`,
    [merchant.productId, merchant.livemode, key, request.method, request.path, hash, merchant.keyId],
  );
  if (created) return created;

  const [existing] = await tx.query<IdempotencyKeyRow>(
    `SELECT ${KEY_COLUMNS}, (locked_at IS NOT NULL AND locked_at > now() - $4 * interval '1 millisecond') AS locked
       FROM idempotency_keys WHERE product_id = $1 AND livemode = $2 AND key = $3 FOR UPDATE`,
    [merchant.productId, merchant.livemode, key, IDEMPOTENCY_LOCK_TIMEOUT_MS],
  );
  if (!existing) throw new Error('idempotency key vanished between insert and select');
  // Another API key of the product never gets this key's answer, which may hold a secret only its maker may see.
  if (existing.api_key_id !== null && existing.api_key_id !== merchant.keyId) {
    throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used by another API key of this product');
  }
  if (existing.request_method !== request.method || existing.request_path !== request.path || !existing.request_hash.equals(hash)) {
    throw new ApiError(
      'IDEMPOTENCY_KEY_REUSED',
      `This Idempotency-Key was already used for ${existing.request_method} ${existing.request_path} with other parameters`,
    );
  }
  if (existing.response_status !== null) {
    return { status: existing.response_status, body: existing.response_body!, replayed: true };
  }
  if (existing.locked) {
    throw new ApiError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still in progress; retry later');
  }
  await tx.query(`UPDATE idempotency_keys SET locked_at = now() WHERE ${keyMatch('$1', '$2', '$3')}`, [merchant.productId, merchant.livemode, key]);
  return existing;
}

/** The key's row is found by what names it: the merchant, the mode and the key. */
function keyMatch(productId: string, livemode: string, key: string): string {
  return `product_id = ${productId} AND livemode = ${livemode} AND key = ${key}`;
}

interface KeyState {
  point: string;
  resourceId: string | null;
  status: number | null;
  body: string | null;
  locked: boolean;
}

// A one-statement phase's response is serialized for the key's write, and its result read again for the outcome.
const serializedBodies = new WeakMap<Response, string>();

/** The response's body as stored and sent, serialized once. */
function serializedBody(response: Response): string {
  let body = serializedBodies.get(response);
  if (body === undefined) {
    body = JSON.stringify(response.body);
    serializedBodies.set(response, body);
  }
  return body;
}

/** The key's columns for a phase's result: the next recovery point, or the stored response (and the lock released). */
function keyState(result: PhaseResult, resourceId: string | null): KeyState {
  return 'response' in result
    ? { point: FINISHED, resourceId, status: result.response.status, body: serializedBody(result.response), locked: false }
    : { point: result.next, resourceId: result.resourceId ?? resourceId, status: null, body: null, locked: true };
}

/**
 * Adds to `st` the key writes of a statement's items (`writes[i - 1]` for item i; its key null without one), for
 * the items `guard` holds (null: every item). Returns the items whose key was written or that have no key: the items'
 * own writes are guarded by it. All writes are of one kind. A key that several items of one statement claim is claimed
 * for the first; the others take the transaction path.
 */
export function addKeyWrites(st: Statement, writes: ({ write: KeyWrite; result: PhaseResult } | null)[], guard: Items | null): Items {
  const kinds = new Set(writes.flatMap((each) => (each ? [each.write.kind] : [])));
  if (kinds.size === 0 && guard !== null) return guard;
  if (kinds.size > 1) throw new Error('one statement writes keys of one kind');
  const inItems = guarded(guard, 'v.i');
  const seen = new Set<string>();
  const rows = writes.map((each) => {
    if (each === null) return null;
    const { write: key, result } = each;
    const name = JSON.stringify([key.productId, key.livemode, key.key]);
    const repeated = seen.has(name);
    seen.add(name);
    return { key, state: keyState(result, key.resourceId), repeated };
  });
  const column = <T>(of: (row: NonNullable<(typeof rows)[number]>) => T) => rows.map((row) => (row === null ? null : of(row)));
  const keys = st.param(column((row) => row.key.key), 'text[]');
  const values = st.with(
    'key_v',
    `SELECT * FROM unnest(${st.param(column((row) => row.key.productId), 'text[]')}, ${st.param(column((row) => row.key.livemode), 'boolean[]')},
                          ${keys}, ${st.param(column((row) => row.key.request?.method), 'text[]')},
                          ${st.param(column((row) => row.key.request?.path), 'text[]')},
                          ${st.param(column((row) => row.key.request?.hash.toString('hex')), 'text[]')},
                          ${st.param(column((row) => row.state.point), 'text[]')}, ${st.param(column((row) => row.state.resourceId), 'text[]')},
                          ${st.param(column((row) => row.state.status), 'integer[]')}, ${st.param(column((row) => row.state.body), 'text[]')},
                          ${st.param(column((row) => row.state.locked), 'boolean[]')}, ${st.param(column((row) => row.repeated), 'boolean[]')},
                          ${st.param(column((row) => row.key.request?.apiKeyId), 'text[]')})
            WITH ORDINALITY AS v (product_id, livemode, key, request_method, request_path, request_hash, recovery_point, resource_id,
                                  response_status, response_body, locked, repeated, api_key_id, i)`,
  );
  if (kinds.has('claim')) {
    const claimed = st.with(
      'key_claimed',
      `INSERT INTO idempotency_keys (product_id, livemode, key, request_method, request_path, request_hash, recovery_point, resource_id,
                                     response_status, response_body, locked_at, api_key_id)
       SELECT v.product_id, v.livemode, v.key, v.request_method, v.request_path, decode(v.request_hash, 'hex'), v.recovery_point,
              v.resource_id, v.response_status, v.response_body, CASE WHEN v.locked THEN now() END, v.api_key_id
         FROM ${values} v WHERE v.key IS NOT NULL AND NOT v.repeated AND ${inItems}
        ORDER BY v.product_id, v.livemode, v.key
       ON CONFLICT (product_id, livemode, key) DO NOTHING
       RETURNING product_id, livemode, key`,
    );
    return st.items(
      'key_written',
      `SELECT v.i FROM ${values} v
        WHERE ${inItems}
          AND (v.key IS NULL OR (NOT v.repeated AND (v.product_id, v.livemode, v.key) IN (SELECT product_id, livemode, key FROM ${claimed})))`,
    );
  }
  const advanced = st.with(
    'key_advanced',
    `UPDATE idempotency_keys k
        SET recovery_point = v.recovery_point, resource_id = v.resource_id, response_status = v.response_status,
            response_body = v.response_body, locked_at = CASE WHEN v.locked THEN k.locked_at END
       FROM ${values} v
      WHERE k.key = ANY(${keys}) AND k.product_id = v.product_id AND k.livemode = v.livemode AND k.key = v.key AND ${inItems}
     RETURNING v.i`,
  );
  return st.items('key_written', `SELECT v.i FROM ${values} v WHERE v.key IS NULL AND ${inItems} UNION ALL SELECT i FROM ${advanced}`);
}

/** A request's key, with what names and recognises it. */
interface KeyOfRequest {
  merchant: Merchant;
  key: string;
  request: IdempotentRequest;
}

/** The first phase's key write: a new key row at the point the phase reached, or nothing if the key exists. */
function claimWrite(owner: KeyOfRequest | null): KeyWrite | null {
  if (owner === null) return null;
  const { merchant, key, request } = owner;
  return {
    kind: 'claim',
    productId: merchant.productId,
    livemode: merchant.livemode,
    key,
    request: { method: request.method, path: request.path, hash: hashOf(request), apiKeyId: merchant.keyId },
    resourceId: null,
  };
}

/** A later phase's key write: the key moves on from where it is. */
function advanceWrite(owner: KeyOfRequest | null, progress: Progress): KeyWrite | null {
  if (owner === null || progress.key === null) return null;
  const { merchant } = owner;
  return { kind: 'advance', productId: merchant.productId, livemode: merchant.livemode, key: progress.key, request: null, resourceId: progress.resourceId };
}

interface Progress {
  key: string | null;
  point: string;
  resourceId: string | null;
}

type Outcome = { sent: SentResponse } | { progress: Progress };

function phaseAt(phases: Record<string, Phase>, point: string): Phase {
  const phase = phases[point];
  if (!phase) throw new Error(`no phase for recovery point ${point}`);
  return phase;
}

/** What the request does once the key (if any) reached `state`. */
function outcomeOf(state: KeyState, key: string | null): Outcome {
  if (state.status !== null) return { sent: { status: state.status, body: state.body!, replayed: false } };
  return { progress: { key, point: state.point, resourceId: state.resourceId } };
}

/** Records a phase's result on the key row (when there is a key), in the phase's transaction. */
async function advance(tx: Transaction, owner: KeyOfRequest | null, result: PhaseResult, progress: Progress): Promise<Outcome> {
  const write = advanceWrite(owner, progress);
  if (write !== null) {
    const st = new Statement();
    addKeyWrites(st, [{ write, result }], null);
    await st.run(tx, 'SELECT 1');
  }
  return outcomeOf(keyState(result, progress.resourceId), progress.key);
}

/** One request's run through its phases; `owner` is null for a request without a key. */
interface Run {
  db: Db;
  owner: KeyOfRequest | null;
  phases: Record<string, Phase>;
  hooks: PhaseHooks;
}

/** Runs `phase` in `tx`: an atomic phase's writes, or, for a key resumed at a foreign phase, what is recorded. */
async function inTransaction(tx: Transaction, phase: Phase, resourceId: string | null): Promise<PhaseResult> {
  if ('atomic' in phase) return phase.atomic(tx, resourceId);
  if ('write' in phase) return (await phase.write(tx, null, resourceId)) ?? phase.refuse(tx, resourceId);
  // A key taken over at a foreign phase belonged to a crashed request whose call may have gone through.
  return phase.resume(tx, resourceId);
}

/**
 * The first step: a written first phase's statement with the key's claim when it can be (a new key, its common case),
 * or else a transaction that claims the key and runs the phase the key is at — the first, or where a crashed request
 * left it.
 */
async function firstStep(run: Run, first: Phase): Promise<Outcome> {
  const { db, owner, phases } = run;
  const written = 'write' in first ? await first.write(null, claimWrite(owner), null) : null;
  if (written !== null) return outcomeOf(keyState(written, null), owner?.key ?? null);
  return db.transaction(async (tx): Promise<Outcome> => {
    let at: Progress = { key: null, point: START, resourceId: null };
    if (owner !== null) {
      const claimed = await claim(tx, owner.merchant, owner.key, owner.request);
      if ('replayed' in claimed) return { sent: claimed };
      at = { key: owner.key, point: claimed.recovery_point, resourceId: claimed.resource_id };
    }
    return advance(tx, owner, await inTransaction(tx, phaseAt(phases, at.point), at.resourceId), at);
  });
}

/** A later step: a phase's statement outside a transaction when it can be, or else its transaction. */
async function laterStep(run: Run, current: Progress): Promise<Outcome> {
  const { db, owner, hooks } = run;
  const phase = phaseAt(run.phases, current.point);
  const key = advanceWrite(owner, current);
  if ('call' in phase) {
    const called = await phase.call(current.resourceId);
    hooks.afterCall?.(current.point);
    const recorded = await phase.record(null, current.resourceId, called, key);
    if (recorded !== null) return outcomeOf(keyState(recorded, current.resourceId), current.key);
    return db.transaction(async (tx) => {
      const result = await phase.record(tx, current.resourceId, called, null);
      if (result === null) throw new Error(`the phase at ${current.point} recorded nothing in its transaction`);
      return advance(tx, owner, result, current);
    });
  }
  const written = 'write' in phase ? await phase.write(null, key, current.resourceId) : null;
  if (written !== null) return outcomeOf(keyState(written, current.resourceId), current.key);
  return db.transaction(async (tx) => advance(tx, owner, await inTransaction(tx, phase, current.resourceId), current));
}

/**
 * After a phase threw: a business refusal is stored as the key's answer and sent; otherwise the key this request
 * holds is unlocked and the error goes on (a 5xx, which a retry may resume).
 */
async function settleFailure(run: Run, error: unknown, held: string | null): Promise<SentResponse> {
  const { db, owner } = run;
  if (owner === null) throw error;
  const { merchant, key, request } = owner;
  if (isStoredRefusal(error)) {
    const sent = { status: error.statusCode, body: JSON.stringify(error.body(request.id)), replayed: false };
    if (await storeRefusal(db, merchant, key, request, sent, held !== null)) return sent;
  }
  if (held !== null) {
    await db
      .query(`UPDATE idempotency_keys SET locked_at = NULL WHERE ${keyMatch('$1', '$2', '$3')}`, [merchant.productId, merchant.livemode, held])
      .catch(() => {});
  }
  throw error;
}

/** Runs the steps of `run` from the first phase until one answers. */
async function runSteps(run: Run): Promise<SentResponse> {
  const { db, owner, phases, hooks } = run;
  let progress: Progress = { key: null, point: START, resourceId: null };
  // Each phase either finishes or moves on; more steps than phases would mean a cycle, a bug.
  const stepsMax = Object.keys(phases).length;
  let stopRenewing = () => {};
  try {
    for (let step = 0; step < stepsMax; step++) {
      // Progress is taken from the committed outcome only: a transaction the engine retries starts from `progress` again.
      const outcome = step === 0 ? await firstStep(run, phaseAt(phases, START)) : await laterStep(run, progress);
      if ('sent' in outcome) {
        if (!outcome.sent.replayed) hooks.afterCommit?.(FINISHED);
        return outcome.sent;
      }
      if (owner !== null && progress.key === null && outcome.progress.key !== null) stopRenewing = renewLock(db, owner.merchant, outcome.progress.key);
      progress = outcome.progress;
      hooks.afterCommit?.(progress.point);
    }
    throw new Error(`idempotent request did not finish within ${stepsMax} phases`);
  } catch (error) {
    return await settleFailure(run, error, progress.key);
  } finally {
    stopRenewing();
  }
}

/**
 * Runs `phases` once per (product, mode, key): a repeated request gets the stored response, a request with other
 * parameters 422, a request while the first still runs 409. Thrown errors (5xx) are not stored and unlock the key.
 * Without a key (optional on that route) the phases simply run in order.
 */
export function runIdempotent(
  db: Db,
  merchant: Merchant,
  key: string | null,
  request: IdempotentRequest,
  phases: Record<string, Phase>,
  hooks: PhaseHooks = {},
): Promise<SentResponse> {
  return runSteps({ db, owner: key === null ? null : { merchant, key, request }, phases, hooks });
}

/** Runs `phases` in order for a caller without an idempotency key (the buyer's hosted page). */
export function runPhases(db: Db, phases: Record<string, Phase>, hooks: PhaseHooks = {}): Promise<SentResponse> {
  return runSteps({ db, owner: null, phases, hooks });
}

/**
 * Renews the lock of a key this request holds until the returned function is called, so that the lock outlives the
 * request exactly as long as its process does. A renewal changes nothing once the request released the key.
 */
function renewLock(db: Db, merchant: Merchant, key: string): () => void {
  const timer = setInterval(() => {
    void db
      .query(`UPDATE idempotency_keys SET locked_at = now() WHERE ${keyMatch('$1', '$2', '$3')} AND locked_at IS NOT NULL`, [
        merchant.productId,
        merchant.livemode,
        key,
      ])
      .catch(() => {});
  }, IDEMPOTENCY_LOCK_RENEW_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** Refusals that are not the request's answer: how its key or body was used, and what any retry should meet again. */
const UNSTORED_REFUSALS = new Set(['VALIDATION_ERROR', 'IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED', 'RATE_LIMITED']);

/** A business refusal (a 4xx the request earned once understood): stored under its key like any answer that is not a 5xx. */
function isStoredRefusal(error: unknown): error is ApiError {
  return error instanceof ApiError && error.statusCode < 500 && !UNSTORED_REFUSALS.has(error.code);
}

/**
 * Stores a phase's refusal as the key's answer, after the phase's transaction rolled back. The key is written new, or, if
 * it exists for this same request without an answer, finished: when this request holds its lock (`held`, a later
 * phase refused), or when nobody does (a crashed request's key resumed at the first phase). Says whether it stored.
 */
async function storeRefusal(db: Db, merchant: Merchant, key: string, request: IdempotentRequest, sent: SentResponse, held: boolean): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO idempotency_keys (product_id, livemode, key, request_method, request_path, request_hash, recovery_point, response_status, response_body,
                                   api_key_id)
     VALUES ($1, $2, $3, $4, $5, $6, '${FINISHED}', $7, $8, $11)
     ON CONFLICT (product_id, livemode, key) DO UPDATE
        SET recovery_point = '${FINISHED}', response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body, locked_at = NULL
      WHERE idempotency_keys.response_status IS NULL AND idempotency_keys.request_hash = EXCLUDED.request_hash
        AND ($9 OR idempotency_keys.locked_at IS NULL OR idempotency_keys.locked_at <= now() - $10 * interval '1 millisecond')
        AND idempotency_keys.api_key_id IS NOT DISTINCT FROM EXCLUDED.api_key_id
     RETURNING key`,
    [
      merchant.productId,
      merchant.livemode,
      key,
      request.method,
      request.path,
      hashOf(request),
      sent.status,
      sent.body,
      held,
      IDEMPOTENCY_LOCK_TIMEOUT_MS,
      merchant.keyId,
    ],
  );
  return rows.length === 1;
}

/**
 * Unlocks every key at once, for a process that knows no other process is using the database: each lock left belongs
 * to a request of a process that died, whose client may retry now instead of after the lock lapses.
 */
export async function releaseAllLocks(db: Queryable): Promise<void> {
  await db.query('UPDATE idempotency_keys SET locked_at = NULL WHERE locked_at IS NOT NULL');
}

/** Deletes at most `batchMax` keys past their retention, oldest first; returns how many. */
export async function deleteExpiredKeys(db: Queryable, batchMax: number): Promise<number> {
  const rows = await db.query(
    `DELETE FROM idempotency_keys WHERE id IN (
       SELECT id FROM idempotency_keys WHERE created_at < now() - $1 * interval '1 hour'
        ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING id`,
    [IDEMPOTENCY_RETENTION_HOURS, batchMax],
  );
  return rows.length;
}
