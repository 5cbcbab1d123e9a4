// The hosted page's first HTML: what is being paid, to whom, and where the session stands, in the buyer's language,
// before any script runs. The page's script then takes over from the same state (given in `data-session`), with the
// same screens (screens.js) and the same texts (i18n.js).
import type { CheckoutPage } from '../modules/checkout/service.js';
import { formatAmount, textsFor, type Texts } from './assets/i18n.js';
import { clock, isOpen, screenOf, type Screen } from './assets/screens.js';
import type { Lang } from './language.js';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

const textOf = (texts: Texts, key: `${string}Title` | `${string}Text`): string | null => {
  const value = texts[key];
  return typeof value === 'string' ? value : null;
};

/** What is being paid, and the time left to pay it (the script keeps the time ticking). */
function summary(page: CheckoutPage, lang: Lang, texts: Texts, now: number): string {
  const order = page.state.order!;
  const seconds = Math.max(0, Math.floor((Date.parse(page.state.expiresAt) - now) / 1000));
  return `<div class="summary">
  <p class="amount-label">${escapeHtml(texts.amountLabel)}</p>
  <p class="amount" id="amount">${escapeHtml(formatAmount(order.amount, lang))}</p>
  ${order.description ? `<p class="description">${escapeHtml(order.description)}</p>` : ''}
  ${isOpen(page.state) ? `<p class="time-left" role="timer">${escapeHtml(texts.timeLeft(clock(seconds)))}</p>` : ''}
</div>`;
}

/** A screen's own words when they need no script: an outcome's explanation, and the way back to the shop. */
function outcome(screen: Screen, page: CheckoutPage | null, texts: Texts): string {
  const completed = screen.name === 'paid' || screen.name === 'done';
  const line = completed ? (page?.state.returnUrl ? texts.returning : texts.closeHint) : textOf(texts, `${screen.name}Text`);
  const back = screen.final && page?.returnUrl ? `<a class="button" href="${escapeHtml(page.returnUrl)}">${escapeHtml(texts.backToShop)}</a>` : '';
  if (screen.symbol === null) return '';
  return `<div class="outcome">${line ? `<p>${escapeHtml(line)}</p>` : ''}${back}</div>`;
}

function header(page: CheckoutPage | null, texts: Texts): string {
  const name = page?.state.productName;
  const logo = page?.logoDigest
    ? `<img class="logo" src="/brand/logos/${page.logoDigest}" alt="${escapeHtml(name ?? '')}">`
    : '<span class="brand">Tolov</span>';
  return `<header class="top">
    ${logo}
    <nav class="languages" id="languages" aria-label="Til · Язык · Language"></nav>
  </header>
  <p class="merchant" id="merchant">${name ? escapeHtml(texts.forMerchant(name)) : ''}</p>
  <p class="badge-test" id="test-mode"${page && !page.state.livemode ? '' : ' hidden'}>${escapeHtml(texts.testMode)}</p>`;
}

/** The page for a session (`page`), or for a link that names none (null). */
export function checkoutPageHtml(page: CheckoutPage | null, lang: Lang, now = Date.now()): string {
  const texts = textsFor(lang);
  const screen = screenOf(page?.state ?? null, page ? null : 'notFound');
  const title = textOf(texts, `${screen.name}Title`) ?? '';
  const data = page ? ` data-session="${escapeHtml(JSON.stringify(page.state))}"` : '';
  const shop = page?.returnUrl ? ` data-return-url="${escapeHtml(page.returnUrl)}"` : '';
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>${escapeHtml(title ? `${title} · Tolov` : 'Tolov')}</title>
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/theme.css">
<link rel="stylesheet" href="/assets/checkout.css">
${page?.brandColor ? `<link rel="stylesheet" href="/brand/colors/${page.brandColor.slice(1)}.css">\n` : ''}<script type="module" src="/assets/checkout.js"></script>
</head>
<body>
<main class="sheet"${shop}${data}>
  ${header(page, texts)}
  <div id="symbol" class="symbol ${screen.symbol ?? ''}" aria-hidden="true"${screen.symbol ? '' : ' hidden'}></div>
  <h1 id="title">${escapeHtml(title)}</h1>
  <section id="view" aria-live="polite">
  ${page && screen.summary && page.state.order ? summary(page, lang, texts, now) : ''}
  ${outcome(screen, page, texts)}
  </section>
  <p class="secure" id="secure">${escapeHtml(texts.secure)}</p>
</main>
<noscript><p>JavaScript kerak · Нужен JavaScript · JavaScript is required</p></noscript>
</body>
</html>
`;
}
