import type { Queryable, Transaction } from '../../db/types.js';
import type { ActivationInput } from './schema.js';

const COLUMNS = `a.product_id, p.name AS product_name, a.status, a.legal_name, a.tin, a.legal_address, a.website, a.category, a.bank_mfo,
  a.account_number, a.holder_tin, a.holder_name, a.rejection_reason, a.submitted_by, a.submitted_at, a.decided_at`;

export interface ActivationRow {
  product_id: string;
  product_name: string;
  status: 'submitted' | 'approved' | 'rejected';
  legal_name: string;
  tin: string;
  legal_address: string;
  website: string;
  category: string;
  bank_mfo: string;
  account_number: string;
  holder_tin: string;
  holder_name: string;
  rejection_reason: string | null;
  submitted_by: string;
  submitted_at: Date;
  decided_at: Date | null;
}

export async function findActivation(db: Queryable, productId: string, lock = false): Promise<ActivationRow | undefined> {
  const [row] = await db.query<ActivationRow>(
    `SELECT ${COLUMNS} FROM activation_requests a JOIN products p ON p.id = a.product_id WHERE a.product_id = $1${lock ? ' FOR UPDATE OF a' : ''}`,
    [productId],
  );
  return row;
}

/**
 * Submits the request: a first one, or a correction of a rejected one. Nothing while one is under review or once
 * approved (the statement writes no row: the caller says why).
 */
export async function submit(tx: Transaction, productId: string, input: ActivationInput, userId: string): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO activation_requests AS a (product_id, status, legal_name, tin, legal_address, website, category, bank_mfo, account_number, holder_tin, holder_name, submitted_by, submitted_at)
     VALUES ($1, 'submitted', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now())
     ON CONFLICT (product_id) DO UPDATE SET status = 'submitted', legal_name = EXCLUDED.legal_name, tin = EXCLUDED.tin,
       legal_address = EXCLUDED.legal_address, website = EXCLUDED.website, category = EXCLUDED.category, bank_mfo = EXCLUDED.bank_mfo,
       account_number = EXCLUDED.account_number, holder_tin = EXCLUDED.holder_tin, holder_name = EXCLUDED.holder_name,
       rejection_reason = NULL, submitted_by = EXCLUDED.submitted_by, submitted_at = now(), decided_at = NULL
     WHERE a.status = 'rejected'
     RETURNING 1`,
    [productId, input.legalName, input.tin, input.legalAddress, input.website, input.category, input.bankMfo, input.accountNumber, input.holderTin, input.holderName, userId],
  );
  return rows.length === 1;
}

/** A submitted request decided, once: returns whether this call decided it. */
export async function decide(tx: Transaction, productId: string, decision: { status: 'approved' } | { status: 'rejected'; reason: string }): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE activation_requests SET status = $2, rejection_reason = $3, decided_at = now() WHERE product_id = $1 AND status = 'submitted' RETURNING 1`,
    [productId, decision.status, decision.status === 'rejected' ? decision.reason : null],
  );
  return rows.length === 1;
}

/**
 * A page of requests in `status` when given, newest submission first or oldest first (the queue as it is worked), after
 * the request of `after` when given.
 */
export function listActivations(db: Queryable, query: { status: string | null; after: string | null; limit: number; oldestFirst: boolean }) {
  const [before, order] = query.oldestFirst ? ['>', 'ASC'] : ['<', 'DESC'];
  return db.query<ActivationRow>(
    `SELECT ${COLUMNS} FROM activation_requests a JOIN products p ON p.id = a.product_id
      WHERE ($1::text IS NULL OR a.status = $1)
        AND ($2::text IS NULL OR (a.submitted_at, a.product_id) ${before} (SELECT submitted_at, product_id FROM activation_requests WHERE product_id = $2))
      ORDER BY a.submitted_at ${order}, a.product_id ${order} LIMIT $3`,
    [query.status, query.after, query.limit],
  );
}
