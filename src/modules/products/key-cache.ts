// API keys as the database last said, so that a merchant request does not look its key up again each time.
//
// Only what can change matters: a key's revocation, or its product's settings that a request reads (whether live
// payments must carry fiscal lines). The statement that makes either change notifies API_KEYS_CHANNEL, and
// every process clears its cache when it hears it; a process that cannot hear (its listening connection dropped)
// does not use its cache until it hears again. A lookup that began before a clear is not cached, nor joined by a
// request that came after it, so a revocation never loses to a reply already on its way. Entries also age out, as a
// last line.
//
// Secrets that no key has, or only a revoked one, are remembered too, apart: a secret is made at random with its key,
// so one unknown now stays unknown, and a revoked key stays revoked. A client sending a wrong key again and again is
// then refused without a lookup each time, and a flood of new wrong keys cannot push the right ones out.
import type { Db } from '../../db/types.js';
import { setNewest } from '../../lib/bounded-map.js';
import { findKeyBySecretHash, markKeysUsed, type AuthenticatedKeyRow } from './store.js';

export const API_KEYS_CHANNEL = 'tolov_api_keys';
const ENTRIES_MAX = 10_000;
const ENTRY_TTL_MS = 60_000;
/** A key's last use is written at most this often by a process: "last used" is exact to the minute. */
const LAST_USED_EVERY_MS = 60_000;

/** How a lookup the cache would make waits for its turn (a request from an address past its failures). */
export type LookupGate = <T>(lookup: () => Promise<T>) => Promise<T>;

type Entry = { row: AuthenticatedKeyRow | undefined; expiresAt: number };

export class ApiKeyCache {
  /** Keys that authenticate, unless revoked since. */
  private readonly entries = new Map<string, Entry>();
  /** Secrets refused: no key has them (`row` undefined), or a revoked one. */
  private readonly refused = new Map<string, Entry>();
  /** Lookups under way since the last clear, by secret hash: the same secret sent at once is looked up once. */
  private readonly lookups = new Map<string, Promise<AuthenticatedKeyRow | undefined>>();
  /** The same, for lookups waiting for a gate's turn, which only other gated requests join. */
  private readonly gated = new Map<string, Promise<AuthenticatedKeyRow | undefined>>();
  /** When this process last wrote each key's last use. */
  private readonly usedWritten = new Map<string, number>();
  /** Bumped by every clear; a lookup caches its answer only if none happened while it ran. */
  private generation = 0;
  private heard = false;

  private constructor(private readonly db: Db) {}

  /** Starts following revocations; the returned function stops. */
  static async start(db: Db): Promise<{ cache: ApiKeyCache; stop: () => Promise<void> }> {
    const cache = new ApiKeyCache(db);
    const stop = await db.listen(API_KEYS_CHANNEL, {
      notified: () => cache.clear(),
      listening: (heard) => {
        cache.clear();
        cache.heard = heard;
      },
    });
    return { cache, stop };
  }

  /** What this process holds of the secret with this hash, while that may be trusted without asking the database. */
  private cached(id: string): Entry | undefined {
    const entry = this.entries.get(id) ?? this.refused.get(id);
    return entry && this.heard && entry.expiresAt > Date.now() ? entry : undefined;
  }

  /**
   * The key with this secret hash, unless unknown (a revoked key is returned as such). A lookup of the database, when
   * one is needed and none for this secret is under way, waits for `gate`'s turn first; only gated requests join it,
   * so that its wait or refusal never falls on an ungated one. In its turn, it asks the cache again.
   */
  find(secretHash: Buffer, gate?: LookupGate): Promise<AuthenticatedKeyRow | undefined> {
    const id = secretHash.toString('base64');
    const cached = this.cached(id);
    if (cached) return Promise.resolve(cached.row);
    const running = this.lookups.get(id) ?? (gate ? this.gated.get(id) : undefined);
    if (running) return running;
    if (gate) return this.shared(this.gated, id, gate(() => this.find(secretHash)));
    return this.shared(this.lookups, id, this.lookUp(id, secretHash));
  }

  /** `lookup`, joined by whoever asks `lookups` for `id` until it ends (or a clear). */
  private shared(lookups: Map<string, Promise<AuthenticatedKeyRow | undefined>>, id: string, lookup: Promise<AuthenticatedKeyRow | undefined>) {
    const joined = lookup.finally(() => {
      if (lookups.get(id) === joined) lookups.delete(id);
    });
    lookups.set(id, joined);
    return joined;
  }

  private async lookUp(id: string, secretHash: Buffer): Promise<AuthenticatedKeyRow | undefined> {
    const generation = this.generation;
    const row = await findKeyBySecretHash(this.db, secretHash);
    if (this.heard && generation === this.generation) {
      const authenticates = row !== undefined && row.revoked_at === null;
      setNewest(authenticates ? this.entries : this.refused, id, { row, expiresAt: Date.now() + ENTRY_TTL_MS }, ENTRIES_MAX);
    }
    return row;
  }

  /**
   * Notes that a key authenticated a request: its first use in a minute is written, without the request waiting for it
   * (a failed write is only a less recent "last used").
   */
  used(keyId: string): void {
    const now = Date.now();
    if ((this.usedWritten.get(keyId) ?? 0) > now - LAST_USED_EVERY_MS) return;
    setNewest(this.usedWritten, keyId, now, ENTRIES_MAX);
    void markKeysUsed(this.db, [{ id: keyId, at: new Date(now) }]).catch(() => {});
  }

  /** Forgets everything: called for each revocation heard, and by this process right after its own. */
  clear(): void {
    this.generation += 1;
    this.entries.clear();
    this.refused.clear();
    this.lookups.clear();
    this.gated.clear();
  }
}
