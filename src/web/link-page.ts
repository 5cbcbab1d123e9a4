// A payment link's page, /l/{slug}: what is sold, by whom, and for how much (or a field for the amount the buyer
// chooses), with a Pay button that posts the form; written whole by the server in the buyer's language, no script.
// Pressing Pay opens an order and takes the buyer to the hosted payment page; a plain visit (a link preview) makes none.
import type { PaymentLinkPage } from '../modules/payment-links/service.js';
import { formatAmount, textsFor, type Texts } from './assets/i18n.js';
import { html, pageStart, type Html } from './html.js';
import type { Lang } from './language.js';
import { linkTextsFor, type LinkTexts } from './link-texts.js';
import { shopHeader } from './shop-header.js';

/** What the page shows of a link and its shop (amountMin and amountMax are set when the buyer chooses the amount). */
export type LinkView = Pick<PaymentLinkPage, 'slug' | 'description' | 'amount' | 'amountMin' | 'amountMax' | 'livemode' | 'shop'>;

/**
 * What the page says: the form (with the amount entered and refused, if it was), or why the link takes no payment.
 * `suspended`: the shop may not take payments now.
 */
export type LinkScreen =
  | { kind: 'form'; link: LinkView; refused?: { entered: string } }
  | { kind: 'inactive' | 'sold_out' | 'suspended'; link: LinkView }
  | { kind: 'not_found' };

/** The amount, fixed or to be entered, and the Pay button. */
function form(link: LinkView, lang: Lang, words: LinkTexts, refused: { entered: string } | undefined): Html {
  const money = (tiyin: number | null) => formatAmount(tiyin ?? 0, lang);
  const fixed = link.amount !== null;
  const error = refused ? words.amountError(money(link.amountMin), money(link.amountMax)) : null;
  const amount = fixed
    ? html`<div class="summary">
        <p class="amount-label">${words.amount}</p>
        <p class="amount" id="amount">${money(link.amount)}</p>
      </div>`
    : html`<div class="field${error ? ' invalid' : ''}">
        <label for="amount">${words.chooseAmount}</label>
        <input id="amount" name="amount" inputmode="decimal" autocomplete="off" required maxlength="20" value="${refused?.entered ?? ''}"
          aria-describedby="${error ? 'amount-error' : 'amount-hint'}"${error ? html` aria-invalid="true" autofocus` : null}>
        ${error
          ? html`<p class="error" id="amount-error" role="alert">${error}</p>`
          : html`<p class="hint" id="amount-hint">${words.range(money(link.amountMin), money(link.amountMax))}</p>`}
      </div>`;
  return html`<form method="post" action="/l/${link.slug}?lang=${lang}" class="link-form" novalidate>
    ${amount}
    <button type="submit" class="primary">${fixed ? words.payAmount(money(link.amount)) : words.pay}</button>
    <p class="hint">${words.next}</p>
  </form>`;
}

/** Why nothing can be paid here, in the hosted pages' outcome style. */
function closed(title: string, text: string): Html {
  return html`<div class="symbol warning" aria-hidden="true"></div>
  <h1>${title}</h1>
  <div class="outcome"><p>${text}</p></div>`;
}

function body(screen: LinkScreen, lang: Lang, texts: Texts, words: LinkTexts): Html {
  switch (screen.kind) {
    case 'not_found':
      return closed(texts.notFoundTitle as string, texts.notFoundText as string);
    case 'inactive':
      return closed(words.inactiveTitle, words.inactiveText);
    case 'sold_out':
      return closed(words.soldOutTitle, words.soldOutText);
    case 'suspended':
      return closed(texts.suspendedTitle as string, texts.suspendedText as string);
    case 'form':
      return html`<h1>${screen.link.description}</h1>
      ${form(screen.link, lang, words, screen.refused)}`;
  }
}

export function linkPageHtml(screen: LinkScreen, lang: Lang): string {
  const texts = textsFor(lang);
  const words = linkTextsFor(lang);
  const link = screen.kind === 'not_found' ? null : screen.link;
  const title = screen.kind === 'form' ? screen.link.description : words.title;
  return html`${pageStart(lang, `${title} · Tolov`, 'no-referrer')}
<link rel="stylesheet" href="/assets/checkout.css">
${link?.shop.brandColor ? html`<link rel="stylesheet" href="/brand/colors/${link.shop.brandColor.slice(1)}.css">` : null}
</head>
<body>
<main class="sheet">
  ${shopHeader(link?.shop ?? { name: 'Tolov', logoDigest: null }, lang)}
  ${link ? html`<p class="merchant">${texts.forMerchant(link.shop.name)}</p>` : null}
  ${link && !link.livemode ? html`<p class="badge-test">${texts.testMode}</p>` : null}
  ${body(screen, lang, texts, words)}
</main>
</body>
</html>
`.text;
}
