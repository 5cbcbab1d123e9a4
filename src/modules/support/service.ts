// Support's search, for the operator console and the operator API alike: any object by its id (a payment, order,
// refund, payout, receipt, event, ledger transaction, webhook endpoint or card, of any product, in either mode), with
// its timeline; or the payments of one card's last four digits, amount and Tashkent day. Each search is written to the
// operators' audit log, found or not: who looked at a customer's payments is worth knowing.
import { isCalendarDay } from '../../core/calendar.js';
import { AMOUNT_MAX } from '../../core/schemas.js';
import type { Queryable } from '../../db/types.js';
import type { OperatorActor, OperatorsService } from '../operators/service.js';
import * as store from './store.js';
import type { FoundObject, MomentName, ObjectKind } from './store.js';

export type { FactName, FoundObject, LinkName, MomentName, ObjectKind } from './store.js';
export { MONEY_FACTS } from './store.js';

/** Payments a card search lists at most: a person reads them, and more than this asks for a narrower search. */
export const SEARCH_RESULTS_MAX = 50;
/** Events, and ledger transactions, a timeline shows at most: an object has a handful; a page stays bounded whatever happened. */
const TIMELINE_EVENTS_MAX = 200;

const KINDS: Readonly<Record<string, ObjectKind>> = {
  pi: 'payment_intent',
  ord: 'order',
  re: 'refund',
  po: 'payout',
  rcpt: 'receipt',
  evt: 'event',
  ltx: 'ledger_transaction',
  we: 'webhook_endpoint',
  card: 'card',
};

/** An id as Tolov makes them: its kind's prefix, `_`, then letters and digits. A card number is none. */
export const OBJECT_ID_PATTERN = '^[a-z]{2,5}_[A-Za-z0-9]{1,60}$';
const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN);
export const isObjectId = (text: string) => OBJECT_ID.test(text);

/** The kind of object an id names by its prefix; undefined for an id of no kind the search reads (a product's). */
export function kindOf(id: string): ObjectKind | undefined {
  if (!isObjectId(id)) return undefined;
  const prefix = id.slice(0, id.indexOf('_'));
  return Object.hasOwn(KINDS, prefix) ? KINDS[prefix] : undefined;
}

/** So'm as a person types them (50000, 50 000, 50000.5, 50 000,50) in tiyin, exactly, within the API's bounds; null otherwise. */
export function tiyinOfSom(text: string): number | null {
  const match = /^(\d+(?:[ \u00a0\u202f]\d{3})*)(?:[.,](\d{1,2}))?$/.exec(text.trim());
  if (!match) return null;
  const whole = match[1]!.replace(/\D/g, '').replace(/^0+(?=\d)/, '');
  // Past 11 digits of so'm it is over the largest amount; below that the product is an exact integer.
  if (whole.length > 11) return null;
  const tiyin = Number(whole) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return tiyin >= 1 && tiyin <= AMOUNT_MAX ? tiyin : null;
}

/** Payments by card: the last four digits, the amount in tiyin, and a Tashkent calendar day (UTC+5). */
export interface CardSearch {
  last4: string;
  amount: number;
  day: string;
}

export type CardSearchField = keyof CardSearch;

/** The search the fields make, or which of them are wrong. */
export function cardSearchOf(input: { last4: string; amount: number | null; day: string }): { ok: true; search: CardSearch } | { ok: false; wrong: CardSearchField[] } {
  const wrong: CardSearchField[] = [];
  if (!/^\d{4}$/.test(input.last4)) wrong.push('last4');
  if (input.amount === null || !Number.isSafeInteger(input.amount) || input.amount < 1 || input.amount > AMOUNT_MAX) wrong.push('amount');
  if (!isCalendarDay(input.day)) wrong.push('day');
  return wrong.length > 0 || input.amount === null ? { ok: false, wrong } : { ok: true, search: { last4: input.last4, amount: input.amount, day: input.day } };
}

/** What a search lists of an object: enough to tell it and open it. */
export type SearchHit = Pick<FoundObject, 'object' | 'id' | 'productId' | 'livemode' | 'status' | 'amount' | 'created' | 'card'> & {
  /** A payment refunded in full, which the API keeps SUCCEEDED (its refund is an object of its own). */
  refunded: boolean;
};

export type TimelineEntry =
  | { at: Date; moment: MomentName }
  | { at: Date; child: FoundObject['children'][number] }
  | { at: Date; ledger: store.LedgerRow }
  | { at: Date; event: store.EventRow };

export const hitOf = ({ object, id, productId, livemode, status, amount, created, card, facts }: FoundObject): SearchHit => {
  const refunded = facts.find((fact) => fact.name === 'amount_refunded')?.value;
  return { object, id, productId, livemode, status, amount, refunded: refunded !== undefined && refunded === String(amount), created, card };
};

export class SupportService {
  constructor(
    private readonly db: Queryable,
    private readonly operators: Pick<OperatorsService, 'recordRead'>,
  ) {}

  /** The object with this id, or undefined; the caller has checked it is an id (`isObjectId`). */
  async find(actor: OperatorActor, id: string): Promise<FoundObject | undefined> {
    if (!isObjectId(id)) throw new Error('find() takes an object id: check it with isObjectId first');
    await this.operators.recordRead(actor, { action: 'support.searched', target: id });
    const kind = kindOf(id);
    return kind === undefined ? undefined : store.findObject(this.db, kind, id);
  }

  /**
   * What happened to it, oldest first: its own moments; the objects that hang on it (a payment's refunds and receipts)
   * and when each was made; the money it and they moved (ledger transactions, which say when a refund succeeded, which
   * no column does); and the events about all of them. On a tie, in that order: created before its `.created` event.
   */
  async timeline(found: FoundObject): Promise<{ entries: TimelineEntry[]; truncated: boolean }> {
    const ids = [found.id, ...found.children.map((child) => child.id)];
    const events = await store.eventsOf(this.db, ids, TIMELINE_EVENTS_MAX);
    const ledger = await store.ledgerOf(this.db, ids, TIMELINE_EVENTS_MAX);
    const entries: TimelineEntry[] = [
      ...found.moments.map(({ name, at }) => ({ at, moment: name })),
      ...found.children.map((child) => ({ at: child.created, child })),
      ...ledger.map((row) => ({ at: row.created_at, ledger: row })),
      ...events.map((event) => ({ at: event.created_at, event })),
    ];
    entries.sort((a, b) => a.at.getTime() - b.at.getTime());
    return { entries, truncated: events.length === TIMELINE_EVENTS_MAX || ledger.length === TIMELINE_EVENTS_MAX };
  }

  /** The newest SEARCH_RESULTS_MAX payments of the card search, of any product and mode. */
  async payments(actor: OperatorActor, search: CardSearch): Promise<{ hits: SearchHit[]; hasMore: boolean }> {
    const detail = `card ending ${search.last4}, ${search.amount} tiyin, Tashkent day ${search.day}`;
    await this.operators.recordRead(actor, { action: 'support.searched', target: null, detail });
    const rows = await store.paymentsByCard(this.db, { ...search, limit: SEARCH_RESULTS_MAX + 1 });
    const hits = rows.slice(0, SEARCH_RESULTS_MAX).map((row) => ({
      object: 'payment_intent' as const,
      id: row.id,
      productId: row.product_id,
      livemode: row.livemode,
      status: row.status,
      amount: row.amount,
      refunded: row.amount_refunded === row.amount,
      created: row.created_at,
      card: { network: row.rail, last4: row.last4 },
    }));
    return { hits, hasMore: rows.length > SEARCH_RESULTS_MAX };
  }
}
