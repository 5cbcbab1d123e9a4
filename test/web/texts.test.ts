// The hosted pages' three languages say the same things: a text missing in one would show as "undefined" to its buyers.
import { describe, expect, it } from 'vitest';

// The pages' own script, served as written (no types): the shape this test relies on.
const TEXTS_MODULE: string = '../../src/web/assets/i18n.js';
const { LANGUAGES, textsFor, formatDateTime, describeLine } = (await import(TEXTS_MODULE)) as {
  LANGUAGES: Record<string, string>;
  textsFor: (language: string) => unknown;
  formatDateTime: (date: Date, language: string, timeZone?: string) => string;
  describeLine: (line: { count: number; price: number; discount: number; vatPercent: number }, language: string) => string;
};
const NBSP = '\u00a0';

/** Every key path of a language's texts, functions included as leaves. */
function keysOf(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object') return [prefix];
  return Object.entries(value as Record<string, unknown>).flatMap(([key, child]) => keysOf(child, prefix ? `${prefix}.${key}` : key)).sort();
}

describe('the hosted pages\' texts', () => {
  const languages = Object.keys(LANGUAGES);

  it('exist in Uzbek, Russian and English', () => {
    expect(languages).toEqual(['uz', 'ru', 'en']);
  });

  it.each(languages.filter((language) => language !== 'uz'))('have in %s exactly the keys they have in Uzbek', (language) => {
    expect(keysOf(textsFor(language))).toEqual(keysOf(textsFor('uz')));
  });

  it('are all non-empty text or text-making functions', () => {
    for (const language of languages) {
      const texts = textsFor(language) as Record<string, unknown>;
      const leaves = keysOf(texts).map((path) => path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], texts));
      const empty = leaves.filter((leaf) => !(typeof leaf === 'function' || (typeof leaf === 'string' && leaf.trim() !== '')));
      expect(empty, `${language} has empty texts`).toEqual([]);
    }
  });

  it("write a receipt's line whole part by part, and a receipt's moment in Tashkent's time, wherever the reader is", () => {
    const line = { count: 6, price: 4_200_000, discount: 1_200_000, vatPercent: 12 };
    expect(describeLine(line, 'uz')).toBe(['6 × 42 000,00 soʻm', 'chegirma 12 000,00 soʻm', 'QQS 12%'].map((part) => part.replaceAll(' ', NBSP)).join(' · '));
    expect(describeLine({ ...line, discount: 0 }, 'en')).toBe(['6 × UZS 42,000.00', 'VAT 12%'].map((part) => part.replaceAll(' ', NBSP)).join(' · '));
    const moment = new Date(Date.UTC(2026, 10, 23, 23, 5));
    expect(formatDateTime(moment, 'uz', 'Asia/Tashkent')).toBe('24-noyabr 2026, 04:05');
    expect(formatDateTime(moment, 'ru', 'Asia/Tashkent')).toMatch(/^24 ноября 2026 г\.,? (в )?04:05$/);
    expect(formatDateTime(moment, 'en', 'Asia/Tashkent')).toMatch(/^24 November 2026,? (at )?04:05$/);
  });

  it('write a moment as each language does, in the buyer\'s time zone', () => {
    const moment = new Date(2026, 10, 24, 9, 5);
    expect(formatDateTime(moment, 'uz')).toBe('24-noyabr 2026, 09:05');
    expect(formatDateTime(moment, 'ru')).toMatch(/^24 ноября 2026 г\.,? (в )?09:05$/);
    expect(formatDateTime(moment, 'en')).toMatch(/^24 November 2026,? (at )?09:05$/);
  });
});
