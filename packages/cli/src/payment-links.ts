// `tolov payment_links create|list|get|update`: payment links made, read, turned off or on again and described from the
// command line, with the key's mode. Amounts are in tiyin, as the API takes them; each link is printed on one line (id,
// state, price, description, address to share), or with --json as the API's object.
import type { PaymentLink, ReceiptRequest, Tolov } from '@tolov/node';
import { UsageError } from './usage.js';

const LIST_LIMIT_DEFAULT = 10;
const LIST_LIMIT_MAX = 100;

export const LINKS_USAGE = `tolov payment_links create --description TEXT (--amount TIYIN | [--amount-min TIYIN] [--amount-max TIYIN])
                          [--quantity-max N] [--receipt JSON] [--active false]
  | tolov payment_links list [--active true|false] [--limit N]
  | tolov payment_links get <plink_…>
  | tolov payment_links update <plink_…> [--active true|false] [--description TEXT]`;

/** The command line's flags that these commands read, as parseArgs gives them. */
export interface LinkFlags {
  json: boolean;
  description?: string;
  amount?: string;
  'amount-min'?: string;
  'amount-max'?: string;
  'quantity-max'?: string;
  receipt?: string;
  active?: string;
  limit?: string;
}

/** A flag's whole number (tiyin, a count), or undefined without the flag; anything else is a usage mistake. */
function whole(flags: LinkFlags, name: 'amount' | 'amount-min' | 'amount-max' | 'quantity-max' | 'limit'): number | undefined {
  const text = flags[name];
  if (text === undefined) return undefined;
  if (!/^\d{1,15}$/.test(text)) throw new UsageError(`--${name} takes a whole number${name.startsWith('amount') ? ' of tiyin (1500000 is UZS 15,000.00)' : ''}, not ${text}`);
  return Number(text);
}

function activeOf(flags: LinkFlags): boolean | undefined {
  if (flags.active === undefined) return undefined;
  if (flags.active !== 'true' && flags.active !== 'false') throw new UsageError(`--active takes true or false, not ${flags.active}`);
  return flags.active === 'true';
}

function receiptOf(flags: LinkFlags): ReceiptRequest | undefined {
  if (flags.receipt === undefined) return undefined;
  try {
    return JSON.parse(flags.receipt) as ReceiptRequest;
  } catch {
    throw new UsageError('--receipt takes the fiscal lines as JSON, as the API does: {"items": [{"title", "price", "count", "code", "packageCode", "vatPercent"}]}');
  }
}

/** Tiyin as so'm with two decimals, exactly (an integer split, never a float). */
const uzs = (tiyin: number) => `${Math.trunc(tiyin / 100)}.${String(tiyin % 100).padStart(2, '0')} UZS`;

/** A link on one line: what a person needs to tell links apart and share one. */
export function lineOf(link: PaymentLink): string {
  const price = link.amount === null ? `buyer chooses ${uzs(link.amountMin!)}–${uzs(link.amountMax!)}` : uzs(link.amount);
  const stock = link.quantityMax === null ? '' : `, at most ${link.quantityMax} at once`;
  return `${link.id}  ${link.active ? 'active' : 'inactive'}  ${price}${stock}  ${JSON.stringify(link.description)}  ${link.url}`;
}

function create(tolov: Tolov, flags: LinkFlags): Promise<PaymentLink> {
  if (flags.description === undefined) throw new UsageError(`tolov payment_links create needs --description\n\n${LINKS_USAGE}`);
  const fields = {
    amount: whole(flags, 'amount'),
    amountMin: whole(flags, 'amount-min'),
    amountMax: whole(flags, 'amount-max'),
    quantityMax: whole(flags, 'quantity-max'),
    receipt: receiptOf(flags),
    active: activeOf(flags),
  };
  // The API says which combinations it refuses (bounds beside a fixed amount, lines without one), naming the field.
  const given = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  return tolov.paymentLinks.create({ description: flags.description, ...given });
}

function update(tolov: Tolov, id: string, flags: LinkFlags): Promise<PaymentLink> {
  const active = activeOf(flags);
  if (active === undefined && flags.description === undefined) throw new UsageError(`tolov payment_links update takes --active and/or --description\n\n${LINKS_USAGE}`);
  return tolov.paymentLinks.update(id, { ...(active === undefined ? {} : { active }), ...(flags.description === undefined ? {} : { description: flags.description }) });
}

async function list(tolov: Tolov, flags: LinkFlags): Promise<PaymentLink[]> {
  const limit = whole(flags, 'limit') ?? LIST_LIMIT_DEFAULT;
  if (limit < 1 || limit > LIST_LIMIT_MAX) throw new UsageError(`--limit takes a whole number from 1 to ${LIST_LIMIT_MAX}`);
  const active = activeOf(flags);
  return (await tolov.paymentLinks.list({ limit, ...(active === undefined ? {} : { active }) })).data;
}

/** Runs `tolov payment_links <action> …`; prints the link or links, as lines or as JSON. */
export async function paymentLinks(tolov: Tolov, [action, id]: string[], flags: LinkFlags): Promise<void> {
  const print = (value: PaymentLink | PaymentLink[]) => {
    const text = Array.isArray(value) ? value.map(lineOf).join('\n') || 'no payment links' : lineOf(value);
    process.stdout.write(`${flags.json ? JSON.stringify(value) : text}\n`);
  };
  if (action === 'create') return print(await create(tolov, flags));
  if (action === 'list') return print(await list(tolov, flags));
  if (action === 'get' && id !== undefined) return print(await tolov.paymentLinks.retrieve(id));
  if (action === 'update' && id !== undefined) return print(await update(tolov, id, flags));
  throw new UsageError(LINKS_USAGE);
}
