import type { Queryable } from '../../db/db.js';

export type Scope = 'sale_of_goods' | 'subscribe';

export interface ProductRow {
  id: string;
  name: string;
  scopes: Scope[];
  fee_bps: number;
  created_at: Date;
}

export interface KeyRow {
  id: string;
  product_id: string;
  livemode: boolean;
  scopes: Scope[];
  revoked_at: Date | null;
}

export interface AuthenticatedKeyRow extends KeyRow {
  product_name: string;
  fee_bps: number;
}

export async function insertProduct(tx: Queryable, product: Omit<ProductRow, 'created_at'>): Promise<ProductRow> {
  const [row] = await tx.query<ProductRow>(
    'INSERT INTO products (id, name, scopes, fee_bps) VALUES ($1, $2, $3, $4) RETURNING *',
    [product.id, product.name, product.scopes, product.fee_bps],
  );
  return row!;
}

export async function findProduct(db: Queryable, id: string): Promise<ProductRow | undefined> {
  const [row] = await db.query<ProductRow>('SELECT * FROM products WHERE id = $1', [id]);
  return row;
}

export async function insertKey(tx: Queryable, key: Omit<KeyRow, 'revoked_at'> & { secret_hash: Buffer }): Promise<KeyRow> {
  const [row] = await tx.query<KeyRow>(
    `INSERT INTO api_keys (id, product_id, livemode, secret_hash, scopes) VALUES ($1, $2, $3, $4, $5)
     RETURNING id, product_id, livemode, scopes, revoked_at`,
    [key.id, key.product_id, key.livemode, key.secret_hash, key.scopes],
  );
  return row!;
}

export async function findKeyBySecretHash(db: Queryable, secretHash: Buffer): Promise<AuthenticatedKeyRow | undefined> {
  const [row] = await db.query<AuthenticatedKeyRow>(
    `SELECT k.id, k.product_id, k.livemode, k.scopes, k.revoked_at, p.name AS product_name, p.fee_bps
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
                RETURNING id, product_id, livemode, scopes, revoked_at)
     SELECT r.* FROM r, LATERAL (SELECT pg_notify($2, r.id)) AS notified`,
    [id, channel],
  );
  return row;
}
