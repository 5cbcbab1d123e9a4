// Types of i18n.js, for the server's first HTML: the parts of the texts it writes.
export type Language = 'uz' | 'ru' | 'en';
export declare const LANGUAGES: Record<Language, string>;
export declare const DEFAULT_LANGUAGE: Language;
export declare function formatAmount(tiyin: number, language: string): string;
export declare function formatDateTime(date: Date, language: string): string;
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
  /** Why the bank refused a payment, by failureCode. */
  reasons: Record<string, string | undefined>;
  [key: `${string}Title` | `${string}Text`]: string | ((...args: string[]) => string) | undefined;
}
export declare function textsFor(language: string): Texts;
