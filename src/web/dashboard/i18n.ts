// The dashboard's words in Uzbek, Russian and English. English is the reference: the other two are typed against it,
// so a missing or extra key does not compile (and a test compares them too).
import { en as dashboardEn, type Messages as DashboardMessages } from './messages/en.js';
import { ru } from './messages/ru.js';
import { uz } from './messages/uz.js';
import { OPERATOR_MESSAGES, type OperatorMessages } from './messages/operator/index.js';
import type { Lang } from '../language.js';

export { LANGS, isLang, type Lang } from '../language.js';
/** The dashboard's words and the operator console's, which shares its frame and its language switch. */
export type Messages = DashboardMessages & OperatorMessages;
export type MessageKey = keyof Messages;
export type Translate = (key: MessageKey, params?: Record<string, string | number>) => string;

const en: Messages = { ...dashboardEn, ...OPERATOR_MESSAGES.en };
export const MESSAGES: Record<Lang, Messages> = { uz: { ...uz, ...OPERATOR_MESSAGES.uz }, ru: { ...ru, ...OPERATOR_MESSAGES.ru }, en };
export const LANGUAGE_NAMES: Record<Lang, string> = { uz: 'Oʻzbekcha', ru: 'Русский', en: 'English' };

export function translator(lang: Lang): Translate {
  const messages = MESSAGES[lang];
  return (key, params = {}) => messages[key].replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

/**
 * The message a page's address names in `table` (`?done=revoked`), or undefined. Only the table's own keys count: a
 * plain lookup of `constructor` or `__proto__` finds what every object inherits, and the page failed on it.
 */
export function messageNamed<Key extends MessageKey>(table: Readonly<Record<string, Key>>, name: unknown): Key | undefined {
  return typeof name === 'string' && Object.hasOwn(table, name) ? table[name] : undefined;
}

/** The locale each language's numbers are written in (Intl). */
export const LOCALES: Record<Lang, string> = { uz: 'uz-UZ', ru: 'ru-RU', en: 'en-US' };

const perLanguage = (options: Intl.NumberFormatOptions) =>
  Object.fromEntries(Object.entries(LOCALES).map(([lang, locale]) => [lang, new Intl.NumberFormat(locale, options)])) as Record<Lang, Intl.NumberFormat>;
/** Made once: a page writes many numbers. */
const COUNTS = perLanguage({ maximumFractionDigits: 0 });
const PERCENTS = perLanguage({ style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 });

/** A count as the language groups it: 1,234 · 1 234. */
export const formatCount = (lang: Lang, count: number) => COUNTS[lang].format(count);
/** A share as the language writes percentages: 60.0% · 60,0 % (ru, a no-break space) · 60,0% (uz). */
export const formatPercent = (lang: Lang, fraction: number) => PERCENTS[lang].format(fraction);
const RATES = perLanguage({ style: 'percent', maximumFractionDigits: 0 });
/** A VAT rate, a whole percent, as the language writes it: 12% · 12 % (ru) · 12% (uz). */
export const formatVatRate = (lang: Lang, percent: number) => RATES[lang].format(percent / 100);

const SHORT_DAYS = Object.fromEntries(
  Object.entries(LOCALES).map(([lang, locale]) => [lang, new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'short', timeZone: 'UTC' })]),
) as Record<Lang, Intl.DateTimeFormat>;
/** A UTC day (YYYY-MM-DD) as a chart names it: 27-okt · 27 окт. · Oct 27. */
export const formatShortDay = (lang: Lang, day: string) => SHORT_DAYS[lang].format(new Date(`${day}T00:00:00Z`));

const LONG_DAYS = Object.fromEntries(
  Object.entries(LOCALES).map(([lang, locale]) => [lang, new Intl.DateTimeFormat(locale, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' })]),
) as Record<Lang, Intl.DateTimeFormat>;
/**
 * A calendar day (YYYY-MM-DD) as a sentence names it: shanba, 28-noyabr, 2026 · суббота, 28 ноября 2026 г. · Saturday,
 * November 28, 2026.
 */
export const formatLongDay = (lang: Lang, day: string) => LONG_DAYS[lang].format(new Date(`${day}T00:00:00Z`));

/**
 * How a language writes numbers, as the server's Intl knows it, for the pages' scripts: a browser may lack the language's
 * data (Chromium writes Uzbek numbers as English, 40,000 and 40K). Its marks, and its short forms by power of ten.
 */
export interface NumberWriting {
  group: string;
  decimal: string;
  /** [3, '{n} ming'], [6, '{n} mln']…: the largest power a number reaches names it. */
  compact: Array<[number, string]>;
}

/** Thousands, millions, billions and trillions: the short forms a chart's axis may need. */
const COMPACT_POWERS = [3, 6, 9, 12];

function writingOf(locale: string): NumberWriting {
  const parts = new Intl.NumberFormat(locale).formatToParts(1234.5);
  const mark = (type: 'group' | 'decimal') => parts.find((part) => part.type === type)!.value;
  const short = new Intl.NumberFormat(locale, { notation: 'compact' });
  const template = (power: number) => short.formatToParts(10 ** power).map((part) => (part.type === 'integer' ? '{n}' : part.value)).join('');
  return { group: mark('group'), decimal: mark('decimal'), compact: COMPACT_POWERS.map((power) => [power, template(power)]) };
}

export const NUMBER_WRITING: Record<Lang, NumberWriting> = { uz: writingOf(LOCALES.uz), ru: writingOf(LOCALES.ru), en: writingOf(LOCALES.en) };

/**
 * The objects whose statuses pages show: one API value reads differently on each (a payment succeeds, a card is active).
 * A receipt's type (sale, return) and a balance transaction's (charge, refund…) are API values said in the page's words
 * the same way.
 */
export type StatusOf = 'payment' | 'order' | 'refund' | 'card' | 'delivery' | 'receipt' | 'receiptType' | 'balance' | 'balanceType' | 'payout' | 'paymentLink';
type StatusKey = Extract<MessageKey, `${StatusOf}_${string}`>;
/** Whose failure codes a message says: a payment's bank, the fiscal module, a payout's bank (and what to do about it). */
export type FailureOf = 'failure' | 'receiptFailure' | 'payoutFailure' | 'payoutFailureHelp';
type FailureKey = Extract<MessageKey, `${FailureOf}_${string}`>;

/** The message of an API status (SUCCEEDED) of a kind of object; null for a status these messages do not know. */
export function statusKey(of: StatusOf, status: string): StatusKey | null {
  const key = `${of}_${status.toLowerCase()}`;
  return Object.hasOwn(en, key) ? (key as StatusKey) : null;
}

/**
 * The reasons the webhook sender records for an attempt without an HTTP answer: a closed set of English phrases (the
 * API's `attempts[].error`), said here in the page's language.
 */
const ATTEMPT_REASONS: Record<string, MessageKey> = {
  'connection timed out': 'attemptConnectTimedOut',
  'connection refused': 'attemptRefused',
  'connection reset by the endpoint': 'attemptReset',
  'connection closed before an answer': 'attemptClosed',
  'DNS: host name not found': 'attemptHostNotFound',
  'DNS: lookup failed, temporarily': 'attemptLookupFailed',
  'host unreachable': 'attemptHostUnreachable',
  'network unreachable': 'attemptNetworkUnreachable',
  'TLS error: no secure connection to the endpoint': 'attemptTls',
  'connection failed': 'attemptFailed',
  'refused: the host resolves to a private address': 'attemptPrivateAddress',
  'the endpoint is disabled': 'attemptEndpointDisabled',
  'the endpoint is deleted': 'attemptEndpointDeleted',
};
const TIMED_OUT = /^timed out: no answer within (\d+) ms$/;

/** Why a webhook attempt got no answer, in the page's words; a reason these messages do not know, as recorded. */
export function attemptReason(t: Translate, error: string): string {
  const timedOut = TIMED_OUT.exec(error);
  if (timedOut) return t('attemptTimedOut', { ms: timedOut[1]! });
  return Object.hasOwn(ATTEMPT_REASONS, error) ? t(ATTEMPT_REASONS[error]!) : error;
}

/**
 * The message of a bank's failure code (INSUFFICIENT_FUNDS), of the fiscal module's for a receipt (INVALID_CODE), or of
 * a payout's bank (ACCOUNT_CLOSED); null for a code these messages do not know.
 */
export function failureKey(code: string, of: FailureOf = 'failure'): FailureKey | null {
  const key = `${of}_${code.toLowerCase()}`;
  return Object.hasOwn(en, key) ? (key as FailureKey) : null;
}
