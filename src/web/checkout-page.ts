// The hosted page's first HTML: what is being paid, to whom, and where the session stands, in the buyer's language,
// before any script runs. The page's script then takes over from the same state (given in `data-session`), with the
// same screens (screens.js) and the same texts (i18n.js).
import type { CheckoutPage } from '../modules/checkout/service.js';
import { formatAmount, textsFor, type Texts } from './assets/i18n.js';
import { clock, isOpen, screenOf, type Screen } from './assets/screens.js';
import { html, pageStart, type Html } from './html.js';
import type { Lang } from './language.js';

const textOf = (texts: Texts, key: `${string}Title` | `${string}Text`): string | null => {
  const value = texts[key];
  return typeof value === 'string' ? value : null;
};

/** What is being paid, and the time left to pay it (the script keeps the time ticking). */
function summary(page: CheckoutPage, lang: Lang, texts: Texts, now: number): Html {
  const order = page.state.order!;
  const seconds = Math.max(0, Math.floor((Date.parse(page.state.expiresAt) - now) / 1000));
  return html`<div class="summary">
    <p class="amount-label">${texts.amountLabel}</p>
    <p class="amount" id="amount">${formatAmount(order.amount, lang)}</p>
    ${order.description ? html`<p class="description">${order.description}</p>` : null}
    ${isOpen(page.state) ? html`<p class="time-left" role="timer">${texts.timeLeft(clock(seconds))}</p>` : null}
  </div>`;
}

/** A screen's own words when they need no script: an outcome's explanation, and the way back to the shop. */
function outcome(screen: Screen, page: CheckoutPage | null, texts: Texts): Html | null {
  if (screen.symbol === null) return null;
  const completed = screen.name === 'paid' || screen.name === 'done';
  const line = completed ? (page?.state.returnUrl ? texts.returning : texts.closeHint) : textOf(texts, `${screen.name}Text`);
  const why = screen.reason && texts.reasons[screen.reason];
  const back = screen.final && page?.returnUrl ? html`<a class="button" href="${page.returnUrl}">${texts.backToShop}</a>` : null;
  return html`<div class="outcome">${why ? html`<p>${why}</p>` : null}${line ? html`<p>${line}</p>` : null}${back}</div>`;
}

function header(page: CheckoutPage | null, texts: Texts): Html {
  const name = page?.state.productName;
  const logo = page?.logoDigest ? html`<img class="logo" src="/brand/logos/${page.logoDigest}" alt="${name}">` : html`<span class="brand">Tolov</span>`;
  return html`<header class="top">
    ${logo}
    <nav class="languages" id="languages" aria-label="Til · Язык · Language"></nav>
  </header>
  <p class="merchant" id="merchant">${name ? texts.forMerchant(name) : null}</p>
  <p class="badge-test" id="test-mode"${page && !page.state.livemode ? '' : html` hidden`}>${texts.testMode}</p>`;
}

/** The page for a session (`page`), or for a link that names none (null). */
export function checkoutPageHtml(page: CheckoutPage | null, lang: Lang, now = Date.now()): string {
  const texts = textsFor(lang);
  const screen = screenOf(page?.state ?? null, page ? null : 'notFound');
  const title = textOf(texts, `${screen.name}Title`) ?? '';
  const shop = page?.returnUrl ? html` data-return-url="${page.returnUrl}"` : null;
  const data = page ? html` data-session="${JSON.stringify(page.state)}"` : null;
  return html`${pageStart(lang, title ? `${title} · Tolov` : 'Tolov', 'no-referrer')}
<link rel="stylesheet" href="/assets/checkout.css">
${page?.brandColor ? html`<link rel="stylesheet" href="/brand/colors/${page.brandColor.slice(1)}.css">` : null}
<script type="module" src="/assets/checkout.js"></script>
</head>
<body>
<main class="sheet"${shop}${data}>
  ${header(page, texts)}
  <div id="symbol" class="symbol ${screen.symbol ?? ''}" aria-hidden="true"${screen.symbol ? null : html` hidden`}></div>
  <h1 id="title">${title}</h1>
  <section id="view" aria-live="polite">
  ${page && screen.summary && page.state.order ? summary(page, lang, texts, now) : null}
  ${outcome(screen, page, texts)}
  </section>
  <p class="secure" id="secure">${texts.secure}</p>
</main>
<noscript><p>JavaScript kerak · Нужен JavaScript · JavaScript is required</p></noscript>
</body>
</html>
`.text;
}
