import type { Queryable, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import type { Listed } from '../../core/pagination.js';
import { qualified } from '../../core/sql.js';
import type { ReceiptLines } from '../receipts/schema.js';

const LINK_COLUMNS = 'id, product_id, livemode, slug, amount, amount_min, amount_max, description, receipt_lines, active, quantity_max, created_at';
/** What a merchant's list of them reads. */
export const PAYMENT_LINK_LIST: Listed = { table: 'payment_links', columns: LINK_COLUMNS };

export interface PaymentLinkRow {
  id: string;
  product_id: string;
  livemode: boolean;
  /** The public part of its URL, `/l/{slug}`. */
  slug: string;
  /** The fixed amount; null: the buyer chooses within [amount_min, amount_max]. */
  amount: number | null;
  amount_min: number | null;
  amount_max: number | null;
  description: string;
  /** Each order's fiscal lines (fixed amounts only); null without. */
  receipt_lines: ReceiptLines | null;
  active: boolean;
  quantity_max: number | null;
  created_at: Date;
}

/** A link with what its page shows of its product: the name buyers see and its branding, as the hosted pages have them. */
export interface PaymentLinkPageRow extends PaymentLinkRow {
  product_name: string;
  brand_color: string | null;
  logo_digest: string | null;
  product_suspended: boolean;
}

export async function insertLink(tx: Transaction, row: Omit<PaymentLinkRow, 'created_at'>): Promise<PaymentLinkRow> {
  const [inserted] = await tx.query<PaymentLinkRow>(
    `INSERT INTO payment_links (id, product_id, livemode, slug, amount, amount_min, amount_max, description, receipt_lines, active, quantity_max)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${LINK_COLUMNS}`,
    [
      row.id,
      row.product_id,
      row.livemode,
      row.slug,
      row.amount,
      row.amount_min,
      row.amount_max,
      row.description,
      row.receipt_lines === null ? null : JSON.stringify(row.receipt_lines),
      row.active,
      row.quantity_max,
    ],
  );
  return inserted!;
}

export async function findLink(db: Queryable, merchant: Merchant, id: string): Promise<PaymentLinkRow | undefined> {
  const [row] = await db.query<PaymentLinkRow>(`SELECT ${LINK_COLUMNS} FROM payment_links WHERE id = $1 AND product_id = $2 AND livemode = $3`, [
    id,
    merchant.productId,
    merchant.livemode,
  ]);
  return row;
}

/**
 * Changes what is given of `active` and `description`. The UPDATE takes the row's lock, so a deactivation waits for an
 * order being opened through the link (which holds it) and that order's open, once it gets the lock, sees it.
 */
export async function updateLink(
  tx: Transaction,
  merchant: Merchant,
  id: string,
  change: { active: boolean | null; description: string | null },
): Promise<PaymentLinkRow | undefined> {
  const [row] = await tx.query<PaymentLinkRow>(
    `UPDATE payment_links SET active = coalesce($4, active), description = coalesce($5, description)
      WHERE id = $1 AND product_id = $2 AND livemode = $3 RETURNING ${LINK_COLUMNS}`,
    [id, merchant.productId, merchant.livemode, change.active, change.description],
  );
  return row;
}

/** The link of a slug, locked for the opening of an order through it. */
export async function lockBySlug(tx: Transaction, slug: string): Promise<PaymentLinkRow | undefined> {
  const [row] = await tx.query<PaymentLinkRow>(`SELECT ${LINK_COLUMNS} FROM payment_links WHERE slug = $1 FOR UPDATE`, [slug]);
  return row;
}

export async function findPageBySlug(db: Queryable, slug: string): Promise<PaymentLinkPageRow | undefined> {
  const [row] = await db.query<PaymentLinkPageRow>(
    `SELECT ${qualified(LINK_COLUMNS, 'l')}, coalesce(p.display_name, p.name) AS product_name, p.brand_color, p.logo_digest,
            p.suspended_at IS NOT NULL AS product_suspended
       FROM payment_links l JOIN products p ON p.id = l.product_id
      WHERE l.slug = $1`,
    [slug],
  );
  return row;
}
