// The three languages of Tolov's pages, and how a request's language is picked when none was chosen on the page.
export const LANGS = ['uz', 'ru', 'en'] as const;
export type Lang = (typeof LANGS)[number];

export const isLang = (value: unknown): value is Lang => typeof value === 'string' && (LANGS as readonly string[]).includes(value);

/** Language ranges read from Accept-Language at most: a header longer than that names nothing useful after. */
const RANGES_READ_MAX = 20;

/** The remembered choice, else the first of the three the browser names (by its q order), else Uzbek. */
export function languageOf(remembered: string | undefined, acceptLanguage: string | undefined): Lang {
  if (isLang(remembered)) return remembered;
  const named = String(acceptLanguage ?? '')
    .split(',')
    .slice(0, RANGES_READ_MAX)
    .map((part, index) => {
      const [tag, ...options] = part.trim().split(';');
      const q = Number(/^q=([\d.]+)$/.exec(options.map((o) => o.trim()).find((o) => o.startsWith('q=')) ?? '')?.[1] ?? 1);
      return { lang: tag!.toLowerCase().split('-')[0]!, q: Number.isFinite(q) ? q : 0, index };
    })
    .filter((entry) => isLang(entry.lang) && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  return (named[0]?.lang as Lang | undefined) ?? 'uz';
}

/** The cookies of a request's Cookie header, by name. */
export function cookiesOf(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of String(header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) cookies.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  return cookies;
}
