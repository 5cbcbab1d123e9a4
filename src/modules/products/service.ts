import type { Db, Queryable } from '../../db/db.js';
import { API_KEYS_CHANNEL, type ApiKeyCache } from '../../http/api-key-cache.js';
import { ApiError, notFound } from '../../http/errors.js';
import { newId, randomBase62 } from '../../lib/ids.js';
import { sha256 } from '../../lib/secrets.js';
import * as store from './store.js';
import type { Scope } from './store.js';

export const SCOPES: readonly Scope[] = ['sale_of_goods', 'subscribe'];
export type Mode = 'test' | 'live';

const SECRET_RANDOM_CHARS = 32; // ≈ 190 bits
/** The only shape a secret key can have; anything else is refused before touching the database. */
export const SECRET_KEY_PATTERN = /^sk_(test|live)_[0-9A-Za-z]{24,64}$/;

export function modeOf(livemode: boolean): Mode {
  return livemode ? 'live' : 'test';
}

async function createKey(tx: Queryable, productId: string, mode: Mode, scopes: Scope[]) {
  const secret = `sk_${mode}_${randomBase62(SECRET_RANDOM_CHARS)}`;
  const row = await store.insertKey(tx, {
    id: newId('key'),
    product_id: productId,
    livemode: mode === 'live',
    secret_hash: sha256(secret),
    scopes,
    secret_last4: secret.slice(-4),
  });
  return { row, secret };
}

export async function createProduct(db: Db, input: { name: string; scopes: Scope[]; feeBps: number }) {
  return db.transaction(async (tx) => {
    const product = await store.insertProduct(tx, {
      id: newId('prod'),
      name: input.name,
      scopes: input.scopes,
      fee_bps: input.feeBps,
    });
    const test = await createKey(tx, product.id, 'test', input.scopes);
    const live = await createKey(tx, product.id, 'live', input.scopes);
    return { product, keys: { test: test.secret, live: live.secret }, keyIds: { test: test.row.id, live: live.row.id } };
  });
}

export async function addKey(db: Db, productId: string, input: { mode: Mode; scopes?: Scope[] }) {
  const product = await store.findProduct(db, productId);
  if (!product) throw notFound('product');
  const scopes = input.scopes ?? product.scopes;
  const foreign = scopes.find((scope) => !product.scopes.includes(scope));
  if (foreign !== undefined) {
    throw new ApiError('VALIDATION_ERROR', `scopes: the product does not have the scope ${foreign}`, { param: 'scopes' });
  }
  return createKey(db, productId, input.mode, scopes);
}

/** Keys listed per product at most: far above what a product holds, a bound on the answer. */
export const KEYS_LISTED_MAX = 100;

export async function listKeys(db: Db, productId: string): Promise<{ rows: store.KeyRow[]; hasMore: boolean }> {
  if (!(await store.findProduct(db, productId))) throw notFound('product');
  const rows = await store.listKeys(db, productId, KEYS_LISTED_MAX + 1);
  return { rows: rows.slice(0, KEYS_LISTED_MAX), hasMore: rows.length > KEYS_LISTED_MAX };
}

export async function revokeKey(db: Db, keys: ApiKeyCache, keyId: string) {
  const row = await store.revokeKey(db, keyId, API_KEYS_CHANNEL);
  if (!row) throw notFound('key');
  // This process forgets at once; the others when they hear the notification.
  keys.clear();
  return row;
}
