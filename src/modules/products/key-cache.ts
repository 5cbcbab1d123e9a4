// API keys as the database last said, so that a merchant request does not look its key up again each time.
//
// Only what can change matters: a key's revocation, or its product's settings that a request reads (whether live
// payments must carry fiscal lines). The statement that makes either change notifies API_KEYS_CHANNEL, and
// every process clears its cache when it hears it; a process that cannot hear (its listening connection dropped)
// does not use its cache until it hears again. A lookup that began before a clear is not cached, so a revocation
// never loses to a reply already on its way. Entries also age out, as a last line.
import type { Db } from '../../db/types.js';
import { setNewest } from '../../lib/bounded-map.js';
import { findKeyBySecretHash, markKeysUsed, type AuthenticatedKeyRow } from './store.js';

export const API_KEYS_CHANNEL = 'tolov_api_keys';
const ENTRIES_MAX = 10_000;
const ENTRY_TTL_MS = 60_000;
/** A key's last use is written at most this often by a process: "last used" is exact to the minute. */
const LAST_USED_EVERY_MS = 60_000;

export class ApiKeyCache {
  private readonly entries = new Map<string, { row: AuthenticatedKeyRow; expiresAt: number }>();
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

  /** The key with this secret hash as this process holds it, while that may be trusted without asking the database. */
  private cached(id: string): AuthenticatedKeyRow | undefined {
    const entry = this.entries.get(id);
    return entry && this.heard && entry.expiresAt > Date.now() ? entry.row : undefined;
  }

  /** The key with this secret hash, unless unknown (revoked keys are returned as such, never cached). */
  async find(secretHash: Buffer): Promise<AuthenticatedKeyRow | undefined> {
    const id = secretHash.toString('base64');
    const cached = this.cached(id);
    if (cached) return cached;
    const generation = this.generation;
    const row = await findKeyBySecretHash(this.db, secretHash);
    if (row && row.revoked_at === null && this.heard && generation === this.generation) {
      setNewest(this.entries, id, { row, expiresAt: Date.now() + ENTRY_TTL_MS }, ENTRIES_MAX);
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
  }
}
