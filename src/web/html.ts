// HTML built from template literals that escape every value unless it is already Html: a page cannot be handed
// unescaped text by accident, only by wrapping it in `raw` (for markup written here).

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type Value = Html | string | number | null | undefined | false | readonly Value[];

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** `html\`<p>${text}</p>\``: text is escaped, Html is kept, arrays are joined, null/undefined/false render nothing. */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  values.forEach((value, index) => {
    out += render(value) + strings[index + 1]!;
  });
  return new Html(out);
}

/** Markup written in this code base, trusted as is. */
export const raw = (text: string) => new Html(text);

/** The start of every Tolov page, up to its own stylesheets: its language, title, referrer policy, icon and theme. */
export const pageStart = (lang: string, title: string, referrer: 'no-referrer' | 'same-origin') => html`<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="${referrer}">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/theme.css">`;
