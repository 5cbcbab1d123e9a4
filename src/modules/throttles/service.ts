// Turns at guarded work, decided by the database for every process at once. A turn is taken before the work (a
// password check, a code, a sign-up) and given back when the work succeeds, so that failures fill the window and
// parallel attempts never run more checks than it allows.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../db/types.js';
import * as store from './store.js';

export interface ThrottlePolicy {
  /** Names the policy in its rows' keys. */
  name: string;
  windowSeconds: number;
  /** Turns a window gives at once. */
  free: number;
  /**
   * Past the free turns, 0 refuses until the window ends. Otherwise the attempts are slowed, never refused for
   * their number: each further turn starts this many seconds more after the one before, up to `gapMaxSeconds`.
   */
  gapStepSeconds: number;
  gapMaxSeconds: number;
  /** A turn further away than this is refused with the time to come back, rather than held open. */
  waitMaxSeconds: number;
}

export type Turn = { ok: true; waitMs: number; windowStart: Date } | { ok: false; retryAfterSeconds: number };

/** A turn taken, as it is given back: within the window it was taken in, or not at all. */
export interface Taken {
  policy: ThrottlePolicy;
  subject: string;
  windowStart: Date;
}

interface Next {
  hits: number;
  windowStart: Date;
  nextAt: Date;
  expiresAt: Date;
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** The turn a subject's row gives under `policy`, and the row to save when a turn is taken. */
function nextTurn(policy: ThrottlePolicy, row: store.ThrottleRow): { turn: Turn; next?: Next } {
  const now = row.now.getTime();
  const windowMs = policy.windowSeconds * 1000;
  const fresh = row.window_start.getTime() + windowMs <= now;
  const hits = fresh ? 0 : row.hits;
  const windowStart = fresh ? now : row.window_start.getTime();
  const nextAt = fresh ? now : row.next_at.getTime();
  const taken = (startMs: number, gapMs: number): { turn: Turn; next: Next } => {
    const after = Math.max(nextAt, startMs + gapMs);
    const next = { hits: hits + 1, windowStart: new Date(windowStart), nextAt: new Date(after), expiresAt: new Date(Math.max(windowStart + windowMs, after)) };
    return { turn: { ok: true, waitMs: startMs - now, windowStart: next.windowStart }, next };
  };
  if (hits < policy.free) return taken(now, 0);
  if (policy.gapStepSeconds === 0) return { turn: { ok: false, retryAfterSeconds: seconds(windowStart + windowMs - now) } };
  const start = Math.max(nextAt, now);
  if (start - now > policy.waitMaxSeconds * 1000) return { turn: { ok: false, retryAfterSeconds: seconds(start - now) } };
  const gapSeconds = Math.min(policy.gapStepSeconds * (hits - policy.free + 1), policy.gapMaxSeconds);
  return taken(start, gapSeconds * 1000);
}

export class Throttles {
  constructor(private readonly db: Db) {}

  /** Takes a turn for `subject`: refused, or taken with how long to wait for it. */
  take(policy: ThrottlePolicy, subject: string): Promise<Turn> {
    const key = keyOf(policy, subject);
    return this.db.transaction(async (tx) => {
      const { turn, next } = nextTurn(policy, await store.lockThrottle(tx, key));
      if (next) await store.saveThrottle(tx, key, next);
      return turn;
    });
  }

  /**
   * Takes a turn under each policy in order and resolves once the latest of them has come, with the turns taken (to
   * give back if the work succeeds); refused by one, gives back those already taken and says when to come back.
   */
  async takeAll(turns: ReadonlyArray<readonly [ThrottlePolicy, string]>): Promise<{ ok: true; taken: Taken[] } | { ok: false; retryAfterSeconds: number }> {
    const taken: Taken[] = [];
    let waitMs = 0;
    for (const [policy, subject] of turns) {
      const turn = await this.take(policy, subject);
      if (!turn.ok) {
        for (const one of taken) await this.giveBack(one);
        return turn;
      }
      taken.push({ policy, subject, windowStart: turn.windowStart });
      waitMs = Math.max(waitMs, turn.waitMs);
    }
    if (waitMs > 0) await sleep(waitMs);
    return { ok: true, taken };
  }

  /** Gives a turn back (the work it guarded succeeded, so it counts as no failure), if its window still runs. */
  giveBack(taken: Taken): Promise<void> {
    return store.giveBack(this.db, keyOf(taken.policy, taken.subject), taken.windowStart);
  }

  /** Forgets the subject's failures (a full log-in succeeded). */
  clear(policy: ThrottlePolicy, subject: string): Promise<void> {
    return store.clearThrottle(this.db, keyOf(policy, subject));
  }

  deleteExpired(batchMax: number): Promise<number> {
    return store.deleteExpired(this.db, batchMax);
  }
}

const keyOf = (policy: ThrottlePolicy, subject: string) => `${policy.name}:${subject}`.slice(0, 200);
