// The dashboard's words in Uzbek, Russian and English. English is the reference: the other two are typed against it,
// so a missing or extra key does not compile (and a test compares them too).
import { en, type Messages } from './messages/en.js';
import { ru } from './messages/ru.js';
import { uz } from './messages/uz.js';

export const LANGS = ['uz', 'ru', 'en'] as const;
export type Lang = (typeof LANGS)[number];
export type MessageKey = keyof Messages;
export type Translate = (key: MessageKey, params?: Record<string, string | number>) => string;

export const MESSAGES: Record<Lang, Messages> = { uz, ru, en };
export const LANGUAGE_NAMES: Record<Lang, string> = { uz: "O'zbekcha", ru: 'Русский', en: 'English' };

export const isLang = (value: unknown): value is Lang => typeof value === 'string' && (LANGS as readonly string[]).includes(value);

/** The remembered choice, else the first of the three the browser names (by its q order), else Uzbek. */
export function languageOf(remembered: string | undefined, acceptLanguage: string | undefined): Lang {
  if (isLang(remembered)) return remembered;
  const named = String(acceptLanguage ?? '')
    .split(',')
    .slice(0, 20)
    .map((part, index) => {
      const [tag, ...options] = part.trim().split(';');
      const q = Number(/^q=([\d.]+)$/.exec(options.map((o) => o.trim()).find((o) => o.startsWith('q=')) ?? '')?.[1] ?? 1);
      return { lang: tag!.toLowerCase().split('-')[0]!, q: Number.isFinite(q) ? q : 0, index };
    })
    .filter((entry) => isLang(entry.lang) && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  return (named[0]?.lang as Lang | undefined) ?? 'uz';
}

export function translator(lang: Lang): Translate {
  const messages = MESSAGES[lang];
  return (key, params = {}) => messages[key].replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}
