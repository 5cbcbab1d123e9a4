// The dashboard's words in Uzbek, Russian and English. English is the reference: the other two are typed against it,
// so a missing or extra key does not compile (and a test compares them too).
import { en, type Messages } from './messages/en.js';
import { ru } from './messages/ru.js';
import { uz } from './messages/uz.js';
import type { Lang } from '../language.js';

export { LANGS, isLang, type Lang } from '../language.js';
export type MessageKey = keyof Messages;
export type Translate = (key: MessageKey, params?: Record<string, string | number>) => string;

export const MESSAGES: Record<Lang, Messages> = { uz, ru, en };
export const LANGUAGE_NAMES: Record<Lang, string> = { uz: "O'zbekcha", ru: 'Русский', en: 'English' };

export function translator(lang: Lang): Translate {
  const messages = MESSAGES[lang];
  return (key, params = {}) => messages[key].replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}
