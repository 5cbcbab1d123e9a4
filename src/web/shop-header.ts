// The top of the pages the server writes whole (a receipt, a payment link): the shop's logo, else Tolov's name, and
// the languages as links (`?lang=`), so that the page works without a script.
import { LANGUAGES } from './assets/i18n.js';
import { html, raw, type Html } from './html.js';
import { LANGS, type Lang } from './language.js';

export function shopHeader(shop: { name: string; logoDigest: string | null }, lang: Lang): Html {
  const logo = shop.logoDigest ? html`<img class="logo" src="/brand/logos/${shop.logoDigest}" alt="${shop.name}">` : html`<span class="brand">Tolov</span>`;
  const languages = LANGS.map(
    (code) => html`<a href="?lang=${code}" lang="${code}" hreflang="${code}"${code === lang ? raw(' aria-current="true"') : null}>${LANGUAGES[code]}</a>`,
  );
  return html`<header class="top">
    ${logo}
    <nav class="languages" aria-label="Til · Язык · Language">${languages}</nav>
  </header>`;
}
