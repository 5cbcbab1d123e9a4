// The buyer's printable receipt, /receipts/{publicToken}: written whole by the server in the buyer's language, for a
// phone, a desktop and paper; no script is needed but the Print button's. While the receipt is being registered the
// page reloads itself, for a bounded while.
import QRCode from 'qrcode';
import type { PrintableReceipt } from '../modules/checkout/receipt.js';
import { describeLine, formatAmount, formatDateTime, textsFor, type ReceiptTexts, type Texts } from './assets/i18n.js';
import { escapeHtml, html, pageStart, raw, type Html } from './html.js';
import type { Lang } from './language.js';
import { shopHeader } from './shop-header.js';

/** The tax authority's clock: a receipt's time is Tashkent's wherever the buyer or the server is. */
const TIME_ZONE = 'Asia/Tashkent';
/**
 * While PENDING the page reloads this often, as long as the receipt is younger than the window: past it the fiscal
 * module is out and retried minutes to hours apart, and the buyer is asked to come back instead.
 */
const REFRESH_SECONDS = 5;
const REFRESH_WINDOW_MS = 10 * 60_000;

/** The QR code of the tax authority's check link, as SVG: paths with presentation attributes, no style, no script. */
export function qrSvg(url: string): Promise<string> {
  return QRCode.toString(url, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' });
}

/** `860000******0007` → `8600 00•• •••• 0007`: the masked number, grouped as on the card. */
const cardNumber = (maskedPan: string) => maskedPan.replace(/\*/g, '•').replace(/(.{4})(?=.)/g, '$1 ');

const refreshes = (receipt: PrintableReceipt, now: number) => receipt.status === 'PENDING' && now - Date.parse(receipt.created) < REFRESH_WINDOW_MS;

/** The lines (title, count × price, discount, VAT rate, total), the shipping, the total (or the sum returned) and the VAT. */
function lines(receipt: PrintableReceipt, lang: Lang, text: ReceiptTexts): Html {
  const money = (tiyin: number) => formatAmount(tiyin, lang);
  const line = (title: string, total: number, detail: string) =>
    html`<li class="line"><span class="line-title">${title}</span><span class="line-total">${money(total)}</span><span class="line-detail">${detail}</span></li>`;
  const shipping = receipt.shipping && { ...receipt.shipping, count: 1, discount: 0 };
  return html`<section aria-labelledby="lines-title">
    <h2 id="lines-title" class="section-title">${text.lines}</h2>
    <ul class="lines">
      ${receipt.items.map((item) => line(item.title, item.total, describeLine(item, lang)))}
      ${shipping ? line(shipping.title, shipping.price, describeLine(shipping, lang)) : null}
    </ul>
    <dl class="totals">
      <dt>${receipt.type === 'return' ? text.refunded : text.total}</dt><dd>${money(receipt.amount)}</dd>
      <dt>${text.vat}</dt><dd>${money(receipt.vatAmount)}</dd>
    </dl>
  </section>`;
}

/** The payment and, once registered, the fiscal module's numbers: what the shop or the tax authority asks for. */
function details(receipt: PrintableReceipt, text: ReceiptTexts): Html {
  const rows: [string, string | null][] = [
    [text.card, cardNumber(receipt.maskedPan)],
    [text.terminal, receipt.terminalId],
    [text.number, receipt.receiptNumber],
    [text.sign, receipt.fiscalSign],
  ];
  // The reference is long and copied as it is: on a line of its own, never broken inside a phone's width.
  return html`<dl class="details">${rows.filter(([, value]) => value !== null).map(([name, value]) => html`<dt>${name}</dt><dd>${value}</dd>`)}
    <dt class="wide">${text.reference}</dt><dd class="wide reference">${receipt.paymentIntent}</dd>
  </dl>`;
}

/** Where the registration stands: the QR code once registered, else why there is none yet (or will be none). */
function registration(receipt: PrintableReceipt, qr: string | null, text: ReceiptTexts, now: number): Html {
  if (receipt.status === 'FAILED') return html`<p class="fiscal-note failed" role="status">${text.failed}</p>`;
  if (qr === null) {
    const next = refreshes(receipt, now) ? text.refreshing : text.reloadLater;
    return html`<p class="fiscal-note pending" role="status">${text.pending} ${next}</p>`;
  }
  return html`<figure class="qr-figure">
    ${raw(qr.replace('<svg ', `<svg role="img" aria-label="${escapeHtml(text.qr)}" `))}
    <figcaption><span>${text.scan}</span> <a href="${receipt.qrUrl}" target="_blank" rel="noopener noreferrer" class="check-link">${text.check}</a></figcaption>
  </figure>`;
}

function title(receipt: PrintableReceipt, texts: Texts): string {
  return receipt.type === 'return' ? texts.receipt.returnTitle : texts.receipt.saleTitle;
}

/** The page of `receipt`; `qr` is its QR code's SVG once it is FISCALIZED. */
export function receiptPageHtml(receipt: PrintableReceipt, qr: string | null, lang: Lang, now = Date.now()): string {
  const texts = textsFor(lang);
  const text = texts.receipt;
  const when = formatDateTime(new Date(receipt.fiscalizedAt ?? receipt.created), lang, TIME_ZONE);
  const color = receipt.shop.brandColor;
  return html`${pageStart(lang, `${title(receipt, texts)} · ${receipt.shop.name}`, 'no-referrer')}
<link rel="stylesheet" href="/assets/checkout.css">
<link rel="stylesheet" href="/assets/receipt.css">
${color ? html`<link rel="stylesheet" href="/brand/colors/${color.slice(1)}.css">` : null}
${refreshes(receipt, now) ? html`<meta http-equiv="refresh" content="${REFRESH_SECONDS}">` : null}
<script type="module" src="/assets/receipt.js"></script>
</head>
<body>
<main class="sheet printable">
  ${shopHeader(receipt.shop, lang)}
  <div class="heading">
    <h1>${title(receipt, texts)}</h1>
    <p class="shop">${receipt.shop.name}</p>
    <p class="when"><time datetime="${receipt.fiscalizedAt ?? receipt.created}">${text.tashkentTime(when)}</time></p>
  </div>
  ${receipt.livemode ? null : html`<p class="badge-test">${texts.testMode}</p>`}
  ${lines(receipt, lang, text)}
  ${details(receipt, text)}
  ${registration(receipt, qr, text, now)}
  ${receipt.status === 'PENDING' ? null : html`<button type="button" class="primary print" id="print" hidden>${text.print}</button>`}
</main>
</body>
</html>
`.text;
}
