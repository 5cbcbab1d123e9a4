// Types of i18n.js, for the server's first HTML: the parts of the texts it writes.
export type Language = 'uz' | 'ru' | 'en';
export declare const LANGUAGES: Record<Language, string>;
export declare const DEFAULT_LANGUAGE: Language;
export declare function formatAmount(tiyin: number, language: string): string;
export declare function formatDateTime(date: Date, language: string, timeZone?: string): string;
export declare function describeLine(line: { count: number; price: number; discount: number; vatPercent: number }, language: string): string;
/** The words of a receipt, on the paid screen and the printable page. */
export interface ReceiptTexts {
  title: string;
  merchant: string;
  amount: string;
  card: string;
  date: string;
  reference: string;
  saleTitle: string;
  returnTitle: string;
  lines: string;
  discount(amount: string): string;
  vatRate(percent: number): string;
  total: string;
  refunded: string;
  vat: string;
  tashkentTime(time: string): string;
  pending: string;
  refreshing: string;
  reloadLater: string;
  failed: string;
  number: string;
  sign: string;
  terminal: string;
  qr: string;
  scan: string;
  check: string;
  open: string;
  print: string;
}
export interface Texts {
  forMerchant(name: string): string;
  timeLeft(left: string): string;
  amountLabel: string;
  testMode: string;
  secure: string;
  backToShop: string;
  closeHint: string;
  returning: string;
  payButton(amount: string): string;
  receipt: ReceiptTexts;
  /** Why the bank refused a payment, by failureCode. */
  reasons: Record<string, string | undefined>;
  [key: `${string}Title` | `${string}Text`]: string | ((...args: string[]) => string) | undefined;
}
export declare function textsFor(language: string): Texts;
