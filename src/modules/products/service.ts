import type { Db, Queryable, Transaction } from '../../db/types.js';
import type { Answer, Commands, Invocation } from '../../core/commands.js';
import { API_KEYS_CHANNEL, type ApiKeyCache } from './key-cache.js';
import { ApiError, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { randomBase62 } from '../../lib/random.js';
import { sha256 } from '../../lib/secrets.js';
import * as store from './store.js';
import { brandingOf, changeBranding, logoOf, type Branding, type BrandingChange } from './branding.js';
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

/** The operator's search: a page of products at most. */
export const SEARCH_PAGE_MAX = 50;
/** A product's fee in basis points: 0 to 100%. */
export const FEE_BPS_MAX = 10_000;
/** The longest suspension reason the merchant reads. */
export const SUSPENSION_REASON_MAX = 500;
/** The longest text the operator's search looks for. */
const SEARCH_TEXT_MAX = 200;

/** Products and their API keys: the operator's calls, and the dashboard's commands on the account's own product. */
export class ProductsService {
  constructor(
    private readonly db: Db,
    private readonly keys: ApiKeyCache,
    private readonly defaultFeeBps: number,
    private readonly commands: Commands,
  ) {}

  /** The operator's product, with a test and a live key, in the operator's transaction. */
  async create(input: { name: string; scopes?: Scope[]; feeBps?: number; receiptRequired?: boolean }, tx: Transaction) {
    const scopes = input.scopes ?? [...SCOPES];
    const product = await store.insertProduct(tx, {
      id: newId('prod'),
      name: input.name,
      scopes,
      fee_bps: input.feeBps ?? this.defaultFeeBps,
      account_id: null,
      live_enabled: true,
      receipt_required: input.receiptRequired ?? true,
    });
    const test = await createKey(tx, product.id, 'test', scopes);
    const live = await createKey(tx, product.id, 'live', scopes);
    return { product, keys: { test: test.secret, live: live.secret }, keyIds: { test: test.row.id, live: live.row.id } };
  }

  /** A signed-up account's product, test mode only, with a first test key so that its first call needs no detour. */
  async createForAccount(tx: Transaction, accountId: string, name: string): Promise<{ product: store.ProductRow; testKey: { row: store.KeyRow; secret: string } }> {
    const product = await store.insertProduct(tx, { id: newId('prod'), name, scopes: [...SCOPES], fee_bps: this.defaultFeeBps, account_id: accountId, live_enabled: false, receipt_required: true });
    return { product, testKey: await createKey(tx, product.id, 'test', product.scopes) };
  }

  ofAccount(accountId: string): Promise<store.ProductRow | undefined> {
    return store.productOfAccount(this.db, accountId);
  }

  /**
   * The operator's settings: whether the product's live orders and charges must carry fiscal lines, and its fee (for
   * payments from then on). Every process's key cache hears it.
   */
  async updateSettings(productId: string, change: { receiptRequired?: boolean; feeBps?: number }, db: Queryable = this.db): Promise<store.ProductRow> {
    const row = await store.updateSettings(db, productId, change, API_KEYS_CHANNEL);
    if (!row) throw notFound('product');
    this.keys.clear();
    return row;
  }

  /**
   * The operator's search, newest first, at most `limit` (≤ SEARCH_PAGE_MAX) after the product `after`: by id exactly,
   * or by a part of the name or of an owner's e-mail; every product when `q` is empty.
   */
  async search(query: { q: string; after: string | null; limit: number }): Promise<{ rows: store.OperatorProductRow[]; hasMore: boolean }> {
    const limit = Math.min(Math.max(query.limit, 1), SEARCH_PAGE_MAX);
    const q = query.q.trim().slice(0, SEARCH_TEXT_MAX);
    const rows = await store.listOperatorProducts(this.db, { q: q === '' ? null : q, id: null, after: query.after, limit: limit + 1 });
    return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  /** One product as the operator's console shows it: with its owners and its activation request's standing. */
  async operatorView(productId: string): Promise<store.OperatorProductRow> {
    const [row] = await store.listOperatorProducts(this.db, { q: null, id: productId, after: null, limit: 1 });
    if (!row) throw notFound('product');
    return row;
  }

  async exists(productId: string): Promise<boolean> {
    return (await store.findProduct(this.db, productId)) !== undefined;
  }

  async find(productId: string, tx: Queryable = this.db): Promise<store.ProductRow> {
    const row = await store.findProduct(tx, productId);
    if (!row) throw notFound('product');
    return row;
  }

  /**
   * The operator suspends a product (`reason`) or resumes it (null): every process refuses its money calls from the
   * moment the change commits, as its key cache hears it.
   */
  async setSuspended(productId: string, reason: string | null, db: Queryable = this.db): Promise<store.ProductRow> {
    const row = await store.setSuspended(db, productId, reason, API_KEYS_CHANNEL);
    if (!row) throw notFound('product');
    this.keys.clear();
    return row;
  }

  /** The operator's go-ahead for live mode (after checking who the merchant is). */
  async enableLive(productId: string, tx: Queryable = this.db): Promise<store.ProductRow> {
    const row = await store.enableLive(tx, productId);
    if (!row) throw notFound('product');
    return row;
  }

  /** The operator's new key for a product, in the operator's transaction; its secret is in this answer only. */
  addKey(productId: string, input: { mode: Mode; scopes?: Scope[] }, tx: Transaction) {
    return this.addKeyIn(tx, productId, input);
  }

  private async addKeyIn(tx: Transaction, productId: string, input: { mode: Mode; scopes?: Scope[] }) {
    const product = await store.findProduct(tx, productId);
    if (!product) throw notFound('product');
    if (input.mode === 'live' && !product.live_enabled) {
      throw new ApiError('INVALID_STATE', 'Live mode is not enabled for this product yet: Tolov enables it once it has verified the business');
    }
    const scopes = input.scopes ?? product.scopes;
    const foreign = scopes.find((scope) => !product.scopes.includes(scope));
    if (foreign !== undefined) {
      throw new ApiError('VALIDATION_ERROR', `scopes: the product does not have the scope ${foreign}`, { param: 'scopes' });
    }
    return createKey(tx, productId, input.mode, scopes);
  }

  /** A dashboard user's new key of the selected mode (201, its secret in this answer only), audited with it. */
  createKey(invocation: Invocation): Promise<Answer<{ id: string; secret: string }>> {
    const { scope } = invocation;
    const audit = { action: 'api_key.created', target: (key: { id: string }) => key.id };
    const add = async (tx: Transaction) => {
      const { row, secret } = await this.addKeyIn(tx, scope.productId, { mode: modeOf(scope.livemode) });
      return { id: row.id, secret };
    };
    return this.commands.change(invocation, 201, add, { secret: true, audit });
  }

  async listKeys(productId: string): Promise<{ rows: store.KeyRow[]; hasMore: boolean }> {
    if (!(await store.findProduct(this.db, productId))) throw notFound('product');
    const rows = await store.listKeys(this.db, productId, KEYS_LISTED_MAX + 1);
    return { rows: rows.slice(0, KEYS_LISTED_MAX), hasMore: rows.length > KEYS_LISTED_MAX };
  }

  /** One mode's keys of a product, newest first. */
  keysOf(productId: string, livemode: boolean): Promise<store.KeyRow[]> {
    return store.listKeys(this.db, productId, KEYS_LISTED_MAX, livemode);
  }

  /**
   * A new key in place of `keyId` (same mode and scopes); the old one keeps working for `overlapSeconds`, then stops.
   * A key of the other mode is no key here: a test-mode page never touches a live key.
   */
  async rollKey(invocation: Invocation, keyId: string, overlapSeconds: number): Promise<Answer<{ id: string; secret: string }>> {
    const { scope } = invocation;
    const audit = { action: 'api_key.rolled', target: (key: { id: string }) => `${keyId} → ${key.id}` };
    const roll = async (tx: Transaction) => {
      const old = await store.findKey(tx, scope.productId, keyId);
      if (!old || old.livemode !== scope.livemode || old.revoked_at !== null) throw notFound('key');
      if (old.expires_at !== null && old.expires_at.getTime() <= Date.now()) throw new ApiError('INVALID_STATE', 'This key has expired already');
      const { row, secret } = await createKey(tx, scope.productId, modeOf(old.livemode), old.scopes);
      if (!(await store.expireKey(tx, keyId, overlapSeconds, API_KEYS_CHANNEL))) throw notFound('key');
      return { id: row.id, secret };
    };
    // This process reads the old key's expiry at once, whatever the answer; the others when they hear the notification.
    return this.commands.change(invocation, 201, roll, { secret: true, audit }).finally(() => this.keys.clear());
  }

  /** A dashboard user's revocation of a key of the selected mode; another product's or mode's key is not found. */
  revokeKeyOf(invocation: Invocation, keyId: string): Promise<Answer<{ id: string }>> {
    const { scope } = invocation;
    const revoke = async (tx: Transaction) => {
      const key = await store.findKey(tx, scope.productId, keyId);
      if (!key || key.livemode !== scope.livemode) throw notFound('key');
      return { id: (await this.revokeKeyIn(tx, keyId)).id };
    };
    const audit = { action: 'api_key.revoked', target: keyId };
    return this.commands.change(invocation, 200, revoke, { audit }).finally(() => this.keys.clear());
  }

  /** The operator's revocation of any key, in the operator's transaction. */
  async revokeKey(keyId: string, tx: Transaction) {
    const row = await this.revokeKeyIn(tx, keyId);
    // This process forgets now, and again with every other when the notification comes at the commit.
    this.keys.clear();
    return row;
  }

  private async revokeKeyIn(tx: Transaction, keyId: string) {
    const row = await store.revokeKey(tx, keyId, API_KEYS_CHANNEL);
    if (!row) throw notFound('key');
    return row;
  }

  branding(productId: string): Promise<Branding> {
    return brandingOf(this.db, productId);
  }

  /** The operator's change of a product's branding, in the operator's transaction. */
  changeBranding(productId: string, change: BrandingChange, tx: Transaction): Promise<Branding> {
    return changeBranding(tx, productId, change);
  }

  /** A dashboard owner's change of the product's branding, audited with it. */
  brand(invocation: Invocation, change: BrandingChange): Promise<Answer<Branding>> {
    const { productId } = invocation.scope;
    return this.commands.change(invocation, 200, (tx) => changeBranding(tx, productId, change), { audit: { action: 'product.branding_changed', target: productId } });
  }

  /** A logo by the digest that names it, for the hosted pages. */
  logo(digest: string) {
    return logoOf(this.db, digest);
  }
}
