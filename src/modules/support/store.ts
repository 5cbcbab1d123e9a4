// The support search's reads, across every product and both modes: any object by its id, its events, and payments by
// the card's last four digits, amount and time. Tables, columns and expressions are written here, never taken from a
// request: the id decides only which of them is read.
import type { Queryable } from '../../db/types.js';

export type ObjectKind = 'payment_intent' | 'order' | 'refund' | 'payout' | 'receipt' | 'event' | 'ledger_transaction' | 'webhook_endpoint' | 'card';

/** What an object's page shows besides its status and amount, as text; `MONEY_FACTS` are tiyin. */
export type FactName =
  | 'fee'
  | 'amount_refunded'
  | 'vat_amount'
  | 'total'
  | 'failure_code'
  | 'description'
  | 'reason'
  | 'customer_ref'
  | 'type'
  | 'attempts'
  | 'terminal_id'
  | 'receipt_number'
  | 'fiscal_sign'
  | 'automatic'
  | 'arrival_date'
  | 'holder_name'
  | 'tin'
  | 'url'
  | 'entries';
export const MONEY_FACTS: ReadonlySet<FactName> = new Set(['fee', 'amount_refunded', 'vat_amount', 'total']);

/** The instants an object records of its own life (its events record the rest). */
export type MomentName = 'created_at' | 'debit_started_at' | 'succeeded_at' | 'settled_at' | 'paid_at' | 'expires_at' | 'fiscalized_at' | 'sent_at' | 'finished_at' | 'next_attempt_at';

/** The objects it names: its order, payment, card, receipt, refund; an event's object; a ledger transaction's cause. */
export type LinkName = 'order_id' | 'payment_intent_id' | 'card_id' | 'saved_card_id' | 'refund_id' | 'receipt_id' | 'object_id' | 'reference_id';

export type Network = 'uzcard' | 'humo';

export interface FoundObject {
  object: ObjectKind;
  id: string;
  productId: string;
  livemode: boolean;
  status: string | null;
  amount: number | null;
  created: Date;
  /** The card as a receipt names it: never more than the network and the last four digits. */
  card: { network: Network | null; last4: string } | null;
  /** The account a payout goes to, as the activation review names it: its bank's MFO and its number's last four digits. */
  payoutAccount: { bankMfo: string; accountLast4: string } | null;
  facts: Array<{ name: FactName; value: string }>;
  moments: Array<{ name: MomentName; at: Date }>;
  links: Array<{ name: LinkName; id: string }>;
  /** The objects that hang on it (a payment's refunds and receipts): linked, and on its timeline with their events. */
  children: Array<{ name: LinkName; id: string; created: Date }>;
}

/** How a kind of object is read: its table, its status, amount and card (SQL, NULL where it has none), and the rest. */
interface Shape {
  table: string;
  status: string;
  amount: string;
  network: string;
  last4: string;
  /** A payout's account (SQL): only the last four digits of its number are read, so no page can show more. */
  account?: { bankMfo: string; last4: string };
  facts: Partial<Record<FactName, string>>;
  moments: MomentName[];
  links: LinkName[];
  /** The objects that hang on it (a payment's refunds and receipts), as (name, id, created_at) rows for `$1`. */
  children?: string;
}

const NONE = 'NULL';
const cardOfPayment = (column: string) => ({
  network: `(SELECT p.rail FROM payment_intents p WHERE p.id = ${column})`,
  last4: `(SELECT right(p.masked_pan, 4) FROM payment_intents p WHERE p.id = ${column})`,
});
const entriesOf = (what: string) => `(SELECT ${what} FROM ledger_entries e WHERE e.transaction_id = ledger_transactions.id)`;

const SHAPES: Record<ObjectKind, Shape> = {
  payment_intent: {
    table: 'payment_intents',
    status: 'status',
    amount: 'amount',
    network: 'rail',
    last4: 'right(masked_pan, 4)',
    facts: { fee: 'fee', amount_refunded: 'amount_refunded', failure_code: 'failure_code', description: 'description' },
    moments: ['created_at', 'debit_started_at', 'succeeded_at', 'settled_at'],
    links: ['order_id', 'card_id', 'receipt_id'],
    children: `(SELECT 'refund_id' AS name, id, created_at FROM refunds WHERE payment_intent_id = $1 ORDER BY created_at LIMIT 10)
               UNION ALL (SELECT 'receipt_id', id, created_at FROM receipts WHERE payment_intent_id = $1 ORDER BY created_at LIMIT 10)`,
  },
  order: {
    table: 'orders',
    status: 'status',
    amount: 'amount',
    ...cardOfPayment('orders.payment_intent_id'),
    facts: { failure_code: 'failure_code', description: 'description', customer_ref: 'customer_ref' },
    moments: ['created_at', 'paid_at', 'expires_at'],
    links: ['payment_intent_id', 'saved_card_id', 'receipt_id'],
  },
  refund: {
    table: 'refunds',
    status: 'status',
    amount: 'amount',
    ...cardOfPayment('refunds.payment_intent_id'),
    facts: { failure_code: 'failure_code', reason: 'reason' },
    moments: ['created_at'],
    links: ['payment_intent_id', 'receipt_id'],
  },
  payout: {
    table: 'payouts',
    status: 'status',
    amount: 'amount',
    network: NONE,
    last4: NONE,
    account: { bankMfo: 'bank_mfo', last4: 'right(account_number, 4)' },
    facts: { failure_code: 'failure_code', automatic: 'automatic', arrival_date: 'arrival_date', holder_name: 'holder_name', tin: 'tin', attempts: 'attempts' },
    moments: ['created_at', 'sent_at', 'finished_at', 'next_attempt_at'],
    links: [],
  },
  receipt: {
    table: 'receipts',
    status: 'status',
    amount: 'amount',
    network: cardOfPayment('receipts.payment_intent_id').network,
    last4: 'right(masked_pan, 4)',
    facts: { type: 'type', vat_amount: 'vat_amount', failure_code: 'failure_code', attempts: 'attempts', terminal_id: 'terminal_id', receipt_number: 'receipt_number', fiscal_sign: 'fiscal_sign' },
    moments: ['created_at', 'fiscalized_at', 'next_attempt_at'],
    links: ['payment_intent_id', 'refund_id'],
  },
  event: { table: 'events', status: NONE, amount: NONE, network: NONE, last4: NONE, facts: { type: 'type' }, moments: ['created_at'], links: ['object_id'] },
  ledger_transaction: {
    table: 'ledger_transactions',
    status: NONE,
    amount: NONE,
    network: NONE,
    last4: NONE,
    facts: { reason: 'reason', entries: entriesOf(`string_agg(e.account || ' ' || e.amount, ', ' ORDER BY e.id)`), total: entriesOf('sum(e.amount)') },
    moments: ['created_at'],
    links: ['reference_id'],
  },
  webhook_endpoint: { table: 'webhook_endpoints', status: 'status', amount: NONE, network: NONE, last4: NONE, facts: { url: 'url', description: 'description' }, moments: ['created_at'], links: [] },
  card: { table: 'cards', status: 'status', amount: NONE, network: 'rail', last4: 'right(masked_pan, 4)', facts: { customer_ref: 'customer_ref' }, moments: ['created_at'], links: [] },
};

/** The statement that reads one object of `shape` by its id: every value under a name of its own role. */
function selectOf(shape: Shape): string {
  const facts = Object.entries(shape.facts).map(([name, expression]) => `(${expression})::text AS "f_${name}"`);
  const moments = shape.moments.map((name) => `${name} AS "m_${name}"`);
  const links = shape.links.map((name) => `${name} AS "l_${name}"`);
  return `SELECT id, product_id, livemode, created_at, ${shape.status} AS status, (${shape.amount})::bigint AS amount, ${shape.network} AS network,
                 ${shape.last4} AS last4, ${shape.account?.bankMfo ?? NONE} AS bank_mfo, ${shape.account?.last4 ?? NONE} AS account_last4,
                 ${[...facts, ...moments, ...links].join(', ')}
            FROM ${shape.table} WHERE id = $1`;
}

const SELECTS = Object.fromEntries(Object.entries(SHAPES).map(([kind, shape]) => [kind, selectOf(shape)])) as Record<ObjectKind, string>;

type Row = Record<string, unknown> & {
  id: string;
  product_id: string;
  livemode: boolean;
  created_at: Date;
  status: string | null;
  amount: number | null;
  network: Network | null;
  last4: string | null;
  bank_mfo: string | null;
  account_last4: string | null;
};

/** The object of `kind` with this id, whatever its product and mode. */
export async function findObject(db: Queryable, kind: ObjectKind, id: string): Promise<FoundObject | undefined> {
  const shape = SHAPES[kind];
  const [row] = await db.query<Row>(SELECTS[kind], [id]);
  if (!row) return undefined;
  const children = shape.children ? await db.query<{ name: LinkName; id: string; created_at: Date }>(shape.children, [id]) : [];
  const present = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;
  const own = shape.links.flatMap((name) => (present(row[`l_${name}`]) ? [{ name, id: row[`l_${name}`] as string }] : []));
  // A payment names its sale receipt, which is also among the receipts that hang on it: listed once.
  const links = [...own, ...children.filter((child) => !own.some((link) => link.id === child.id)).map(({ name, id }) => ({ name, id }))];
  return {
    object: kind,
    id: row.id,
    productId: row.product_id,
    livemode: row.livemode,
    status: row.status,
    amount: row.amount,
    created: row.created_at,
    card: row.last4 === null ? null : { network: row.network, last4: row.last4 },
    payoutAccount: row.bank_mfo === null || row.account_last4 === null ? null : { bankMfo: row.bank_mfo, accountLast4: row.account_last4 },
    facts: (Object.keys(shape.facts) as FactName[]).flatMap((name) => (present(row[`f_${name}`]) ? [{ name, value: row[`f_${name}`] as string }] : [])),
    moments: shape.moments.flatMap((name) => (present(row[`m_${name}`]) ? [{ name, at: row[`m_${name}`] as Date }] : [])),
    links,
    children: children.map(({ name, id, created_at }) => ({ name, id, created: created_at })),
  };
}

export interface EventRow {
  id: string;
  type: string;
  object_id: string;
  created_at: Date;
}

/** The events about any of `objectIds`, oldest first, at most `limit`. */
export function eventsOf(db: Queryable, objectIds: string[], limit: number): Promise<EventRow[]> {
  return db.query<EventRow>('SELECT id, type, object_id, created_at FROM events WHERE object_id = ANY($1::text[]) ORDER BY created_at, seq LIMIT $2', [objectIds, limit]);
}

export interface LedgerRow {
  id: string;
  reason: string;
  created_at: Date;
}

/** The ledger transactions any of `objectIds` made (the money each moved), oldest first, at most `limit`. */
export function ledgerOf(db: Queryable, objectIds: string[], limit: number): Promise<LedgerRow[]> {
  return db.query<LedgerRow>('SELECT id, reason, created_at FROM ledger_transactions WHERE reference_id = ANY($1::text[]) ORDER BY created_at, id LIMIT $2', [objectIds, limit]);
}

export interface PaymentRow {
  id: string;
  product_id: string;
  livemode: boolean;
  status: string;
  amount: number;
  amount_refunded: number;
  rail: Network;
  last4: string;
  created_at: Date;
}

/**
 * Payments of `amount` tiyin by a card ending in `last4`, made on the Tashkent calendar day `day` (UTC+5 all year),
 * newest first, at most `limit`. The day's bounds are computed by the database, which has every year a day may name.
 */
export function paymentsByCard(db: Queryable, search: { last4: string; amount: number; day: string; limit: number }): Promise<PaymentRow[]> {
  return db.query<PaymentRow>(
    `SELECT id, product_id, livemode, status, amount, amount_refunded, rail, right(masked_pan, 4) AS last4, created_at
       FROM payment_intents
      WHERE amount = $1 AND right(masked_pan, 4) = $2
        AND created_at >= ($3::date - interval '5 hours') AT TIME ZONE 'UTC' AND created_at < ($3::date + interval '19 hours') AT TIME ZONE 'UTC'
      ORDER BY created_at DESC, seq DESC LIMIT $4`,
    [search.amount, search.last4, search.day, search.limit],
  );
}
