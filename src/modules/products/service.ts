import type { Db, Queryable } from '../../db/types.js';
import { API_KEYS_CHANNEL, type ApiKeyCache } from './key-cache.js';
import { ApiError, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { randomBase62 } from '../../lib/random.js';
import { sha256 } from '../../lib/secrets.js';
import * as store from './store.js';
import type { Scope } from '../../core/merchant.js';

export const SCOPES: readonly Scope[] = ['sale_of_goods', 'subscribe'];
export type Mode = 'test' | 'live';

const SECRET_RANDOM_CHARS = 32; // ≈ 190 bits
/** The only shape a secret key can have; anything else is refused before touching the database. */
export const SECRET_KEY_PATTERN = /^sk_(test|live)_[0-9A-Za-z]{24,64}$/;

export function modeOf(livemode: boolean): Mode {
  return livemode ? 'live' : 'test';
}

async function createKey(db: Queryable, productId: string, mode: Mode, scopes: Scope[]) {
  const secret = `sk_${mode}_${randomBase62(SECRET_RANDOM_CHARS)}`;
  const row = await store.insertKey(db, {
    id: newId('key'),
    product_id: productId,
    livemode: mode === 'live',
    secret_hash: sha256(secret),
    scopes,
    secret_last4: secret.slice(-4),
  });
  return { row, secret };
}

/** Keys listed per product at most: far above what a product holds, a bound on the answer. */
export const KEYS_LISTED_MAX = 100;

/** The operator's products and their API keys. */
export class ProductsService {
  constructor(
    private readonly db: Db,
    private readonly keys: ApiKeyCache,
    private readonly defaultFeeBps: number,
  ) {}

  async create(input: { name: string; scopes?: Scope[]; feeBps?: number }) {
    const scopes = input.scopes ?? [...SCOPES];
    return this.db.transaction(async (tx) => {
      const product = await store.insertProduct(tx, { id: newId('prod'), name: input.name, scopes, fee_bps: input.feeBps ?? this.defaultFeeBps });
      const test = await createKey(tx, product.id, 'test', scopes);
      const live = await createKey(tx, product.id, 'live', scopes);
      return { product, keys: { test: test.secret, live: live.secret }, keyIds: { test: test.row.id, live: live.row.id } };
    });
  }

  async addKey(productId: string, input: { mode: Mode; scopes?: Scope[] }) {
    const product = await store.findProduct(this.db, productId);
    if (!product) throw notFound('product');
    const scopes = input.scopes ?? product.scopes;
    const foreign = scopes.find((scope) => !product.scopes.includes(scope));
    if (foreign !== undefined) {
      throw new ApiError('VALIDATION_ERROR', `scopes: the product does not have the scope ${foreign}`, { param: 'scopes' });
    }
    return createKey(this.db, productId, input.mode, scopes);
  }

  async listKeys(productId: string): Promise<{ rows: store.KeyRow[]; hasMore: boolean }> {
    if (!(await store.findProduct(this.db, productId))) throw notFound('product');
    const rows = await store.listKeys(this.db, productId, KEYS_LISTED_MAX + 1);
    return { rows: rows.slice(0, KEYS_LISTED_MAX), hasMore: rows.length > KEYS_LISTED_MAX };
  }

  async revokeKey(keyId: string) {
    const row = await store.revokeKey(this.db, keyId, API_KEYS_CHANNEL);
    if (!row) throw notFound('key');
    // This process forgets at once; the others when they hear the notification.
    this.keys.clear();
    return row;
  }
}
