import type { Queryable, Transaction } from '../../db/types.js';
import type { Scope } from '../../core/merchant.js';

const PRODUCT_COLUMNS = 'id, name, scopes, fee_bps, account_id, live_enabled, receipt_required, suspended_at, suspension_reason, created_at';

export interface ProductRow {
  id: string;
  name: string;
  scopes: Scope[];
  fee_bps: number;
  /** The dashboard account that owns it; null for products made by the operator API. */
  account_id: string | null;
  live_enabled: boolean;
  /** Whether its live orders and charges must carry fiscal lines. */
  receipt_required: boolean;
  /** Since when the operator has it suspended, and why; null while it may take payments. */
  suspended_at: Date | null;
  suspension_reason: string | null;
  created_at: Date;
}

export interface KeyRow {
  id: string;
  product_id: string;
  livemode: boolean;
  scopes: Scope[];
  revoked_at: Date | null;
  /** A rolled key works until then; null: until revoked. */
  expires_at: Date | null;
  /** Null for keys made before it was kept. */
  secret_last4: string | null;
  created_at: Date;
  last_used_at: Date | null;
}

const KEY_COLUMNS = 'id, product_id, livemode, scopes, revoked_at, expires_at, secret_last4, created_at, last_used_at';

export interface AuthenticatedKeyRow extends KeyRow {
  product_name: string;
  fee_bps: number;
  receipt_required: boolean;
  suspended: boolean;
}

export async function insertProduct(tx: Transaction, product: Omit<ProductRow, 'created_at' | 'suspended_at' | 'suspension_reason'>): Promise<ProductRow> {
  const [row] = await tx.query<ProductRow>(
    `INSERT INTO products (id, name, scopes, fee_bps, account_id, live_enabled, receipt_required) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${PRODUCT_COLUMNS}`,
    [product.id, product.name, product.scopes, product.fee_bps, product.account_id, product.live_enabled, product.receipt_required],
  );
  return row!;
}

/** An account's first product, the one its dashboard shows. */
export async function productOfAccount(db: Queryable, accountId: string): Promise<ProductRow | undefined> {
  const [row] = await db.query<ProductRow>(
    `SELECT ${PRODUCT_COLUMNS} FROM products WHERE account_id = $1 ORDER BY created_at, id LIMIT 1`,
    [accountId],
  );
  return row;
}

export async function enableLive(db: Queryable, id: string): Promise<ProductRow | undefined> {
  const [row] = await db.query<ProductRow>(`UPDATE products SET live_enabled = true WHERE id = $1 RETURNING ${PRODUCT_COLUMNS}`, [id]);
  return row;
}

/**
 * Changes the operator's settings of a product (absent ones stay): its fee, whether its live payments must carry fiscal
 * lines. The same statement notifies `channel`, so that every process forgets the keys it cached (with the product's
 * settings) when the change commits.
 */
export async function updateSettings(db: Queryable, id: string, change: { receiptRequired?: boolean; feeBps?: number }, channel: string): Promise<ProductRow | undefined> {
  const [row] = await db.query<ProductRow>(
    `WITH p AS (UPDATE products SET receipt_required = coalesce($2, receipt_required), fee_bps = coalesce($3, fee_bps) WHERE id = $1 RETURNING ${PRODUCT_COLUMNS})
     SELECT p.* FROM p, LATERAL (SELECT pg_notify($4, p.id)) AS notified`,
    [id, change.receiptRequired ?? null, change.feeBps ?? null, channel],
  );
  return row;
}

/**
 * Suspends the product with `reason`, or resumes it (null), notifying `channel` in the same statement so that every
 * process forgets the keys it cached, with the product's state, when the change commits. A suspension already in force
 * keeps its time and takes the new reason.
 */
export async function setSuspended(db: Queryable, id: string, reason: string | null, channel: string): Promise<ProductRow | undefined> {
  const [row] = await db.query<ProductRow>(
    `WITH p AS (
       UPDATE products SET suspended_at = CASE WHEN $2::text IS NULL THEN NULL ELSE coalesce(suspended_at, now()) END, suspension_reason = $2
        WHERE id = $1 RETURNING ${PRODUCT_COLUMNS})
     SELECT p.* FROM p, LATERAL (SELECT pg_notify($3, p.id)) AS notified`,
    [id, reason, channel],
  );
  return row;
}

export async function findProduct(db: Queryable, id: string): Promise<ProductRow | undefined> {
  const [row] = await db.query<ProductRow>(`SELECT ${PRODUCT_COLUMNS} FROM products WHERE id = $1`, [id]);
  return row;
}

export async function insertKey(
  db: Queryable,
  key: Pick<KeyRow, 'id' | 'product_id' | 'livemode' | 'scopes' | 'secret_last4'> & { secret_hash: Buffer },
): Promise<KeyRow> {
  const [row] = await db.query<KeyRow>(
    `INSERT INTO api_keys (id, product_id, livemode, secret_hash, scopes, secret_last4) VALUES ($1, $2, $3, $4, $5, $6)
     RETURNING ${KEY_COLUMNS}`,
    [key.id, key.product_id, key.livemode, key.secret_hash, key.scopes, key.secret_last4],
  );
  return row!;
}

/** A product's keys (of one mode, or both), newest first; the test key before the live key made with it (a product has a handful: bounded by `limit`). */
export async function listKeys(db: Queryable, productId: string, limit: number, livemode: boolean | null = null): Promise<KeyRow[]> {
  return db.query<KeyRow>(
    `SELECT ${KEY_COLUMNS} FROM api_keys WHERE product_id = $1 AND ($3::boolean IS NULL OR livemode = $3)
      ORDER BY created_at DESC, livemode, id LIMIT $2`,
    [productId, limit, livemode],
  );
}

export async function findKey(db: Queryable, productId: string, id: string): Promise<KeyRow | undefined> {
  const [row] = await db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1 AND product_id = $2`, [id, productId]);
  return row;
}

/**
 * Makes a key stop working `inSeconds` from now (sooner than an earlier expiry only), notifying `channel` so that
 * every process reads the key again.
 */
export async function expireKey(db: Queryable, id: string, inSeconds: number, channel: string): Promise<KeyRow | undefined> {
  const [row] = await db.query<KeyRow>(
    `WITH r AS (UPDATE api_keys SET expires_at = least(coalesce(expires_at, 'infinity'), now() + $2 * interval '1 second')
                 WHERE id = $1 AND revoked_at IS NULL RETURNING ${KEY_COLUMNS})
     SELECT r.* FROM r, LATERAL (SELECT pg_notify($3, r.id)) AS notified`,
    [id, inSeconds, channel],
  );
  return row;
}

/** Records when keys were last used; a later time only, so that processes reporting out of order never go back. */
export async function markKeysUsed(db: Queryable, used: { id: string; at: Date }[]): Promise<void> {
  await db.query(
    `UPDATE api_keys k SET last_used_at = greatest(k.last_used_at, u.at)
       FROM unnest($1::text[], $2::timestamptz[]) AS u (id, at) WHERE k.id = u.id`,
    [used.map((key) => key.id), used.map((key) => key.at)],
  );
}

export async function findKeyBySecretHash(db: Queryable, secretHash: Buffer): Promise<AuthenticatedKeyRow | undefined> {
  const [row] = await db.query<AuthenticatedKeyRow>(
    `SELECT k.id, k.product_id, k.livemode, k.scopes, k.revoked_at, k.expires_at, k.secret_last4, k.created_at, k.last_used_at,
            p.name AS product_name, p.fee_bps, p.receipt_required, p.suspended_at IS NOT NULL AS suspended
       FROM api_keys k JOIN products p ON p.id = k.product_id
      WHERE k.secret_hash = $1`,
    [secretHash],
  );
  return row;
}

/**
 * Revokes once; a second call leaves the first revocation time in place. The same statement notifies `channel`, so
 * that every process forgets the keys it cached when the revocation commits.
 */
export async function revokeKey(db: Queryable, id: string, channel: string): Promise<KeyRow | undefined> {
  const [row] = await db.query<KeyRow>(
    `WITH r AS (UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1
                RETURNING ${KEY_COLUMNS})
     SELECT r.* FROM r, LATERAL (SELECT pg_notify($2, r.id)) AS notified`,
    [id, channel],
  );
  return row;
}

/** A product as the operator's console lists it: with its owners' e-mails and where its activation request stands. */
export interface OperatorProductRow extends ProductRow {
  owner_emails: string[];
  /** Null while no request was submitted. */
  activation_status: 'submitted' | 'approved' | 'rejected' | null;
  /** The e-mail of who submitted the request; null without one (or when that login is gone). */
  activation_submitted_by: string | null;
}

/** Owners listed per product at most: an account has a few; a bound on each row. */
const OWNER_EMAILS_MAX = 10;

/**
 * A page of products for the operator, newest first, after the product `after` when given: those whose id is `q`, or
 * whose name or an owner's e-mail contains `q` (case-insensitively), or all when `q` is null; or the one product `id`.
 * `q` is matched literally: its `%`, `_` and `\` are no wildcards. A scan of the products, bounded by `limit`.
 */
export async function listOperatorProducts(db: Queryable, query: { q: string | null; id: string | null; after: string | null; limit: number }): Promise<OperatorProductRow[]> {
  const pattern = query.q === null ? null : `%${query.q.replace(/[\\%_]/g, '\\$&')}%`;
  const owners = `SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.account_id = p.account_id AND m.role = 'owner'`;
  return db.query<OperatorProductRow>(
    `SELECT ${PRODUCT_COLUMNS.split(', ').map((column) => `p.${column}`).join(', ')},
            ARRAY(${owners} ORDER BY m.created_at, u.email LIMIT ${OWNER_EMAILS_MAX}) AS owner_emails,
            a.status AS activation_status, s.email AS activation_submitted_by
       FROM products p
       LEFT JOIN activation_requests a ON a.product_id = p.id
       LEFT JOIN users s ON s.id = a.submitted_by
      WHERE ($1::text IS NULL OR p.id = $2 OR p.name ILIKE $1 OR EXISTS (${owners} AND u.email ILIKE $1))
        AND ($3::text IS NULL OR p.id = $3)
        AND ($4::text IS NULL OR (p.created_at, p.id) < (SELECT created_at, id FROM products WHERE id = $4))
      ORDER BY p.created_at DESC, p.id DESC LIMIT $5`,
    [pattern, query.q, query.id, query.after, query.limit],
  );
}
