// A payment's fiscal receipts on its page: the sale receipt and, after a refund, the return receipt, each with its
// status, amount and VAT, what the fiscal module signed (or why it did not), and the buyer's printable page; then the
// lines they list, once (a return receipt repeats the sale's).
import type { PaymentIntent } from '../../../modules/payments/schema.js';
import { lineTotal, shippingLine } from '../../../modules/receipts/lines.js';
import type { Receipt } from '../../../modules/receipts/schema.js';
import type { Dash } from '../context.js';
import { html, type Html, type Value } from '../../html.js';
import { formatCount, formatVatRate, type MessageKey } from '../i18n.js';
import { when } from '../layout.js';
import { money, receiptBadge } from './lists.js';

type Line = Receipt['items'][number] & { shipping: boolean };

const code = (text: string | null) => html`<code>${text ?? ''}</code>`;

function fieldsOf(dash: Dash, receipt: Receipt): Array<[MessageKey, Value]> {
  const { t } = dash;
  const rows: Array<[MessageKey, Value]> = [
    ['status', receiptBadge(dash, receipt)],
    ['amount', money(dash, receipt.amount)],
    ['vat', money(dash, receipt.vatAmount)],
  ];
  if (receipt.refund !== null) rows.push(['refund', html`<a href="/dashboard/refunds?q=${receipt.refund}"><code>${receipt.refund}</code></a>`]);
  if (receipt.status === 'FISCALIZED') {
    rows.push(
      ['terminalId', code(receipt.terminalId)],
      ['receiptNumber', code(receipt.receiptNumber)],
      ['fiscalSign', code(receipt.fiscalSign)],
      ['fiscalizedAt', when(receipt.fiscalizedAt)],
      ['taxCheck', receipt.qrUrl === null ? '—' : html`<a href="${receipt.qrUrl}" rel="noopener">${t('openTaxCheck')}</a>`],
    );
  }
  rows.push(['buyerReceipt', html`<a href="${receipt.url}">${t('openBuyerReceipt')}</a>`], ['created', when(receipt.created)]);
  return rows;
}

/** A receipt named by its type, linking to its card on the payment's page (from the payment's timeline). */
export const receiptLink = (dash: Dash, receipt: Pick<Receipt, 'id' | 'type'>) => html`<a href="#${receipt.id}">${dash.t(`receiptHeading_${receipt.type}`)}</a>`;

/** One receipt; its id is the anchor the receipts list links to. */
function receiptCard(dash: Dash, receipt: Receipt): Html {
  const { t } = dash;
  const note =
    receipt.status === 'FAILED'
      ? html`<p class="receipt-note failed">${t('receiptFailedExplained')}</p>`
      : receipt.status === 'PENDING'
        ? html`<p class="receipt-note">${t('receiptPendingExplained')}</p>`
        : '';
  const fields = fieldsOf(dash, receipt).map(([label, value]) => html`<dt>${t(label)}</dt><dd>${value}</dd>`);
  return html`<section class="receipt" id="${receipt.id}" aria-labelledby="${receipt.id}-title">
  <h3 id="${receipt.id}-title">${t(`receiptHeading_${receipt.type}`)} <code>${receipt.id}</code></h3>
  ${note}<dl class="fields">${fields}</dl>
</section>`;
}

function lineRow(dash: Dash, line: Line): Html {
  const { t } = dash;
  const total = lineTotal(line);
  const notes = [line.shipping ? t('shippingLine') : null, line.commissionTin === null ? null : t('onCommission', { tin: line.commissionTin })].filter((note) => note !== null);
  const cell = (label: MessageKey, value: Value, num = false) => html`<td data-label="${t(label)}"${num ? html` class="num"` : ''}>${value}</td>`;
  return html`<tr>${cell('item', html`${line.title}${notes.map((note) => html`<small class="hint">${note}</small>`)}`)}
    ${cell('ikpuCode', code(line.code))}${cell('packageCode', code(line.packageCode))}
    ${cell('quantity', formatCount(dash.lang, line.count), true)}${cell('price', money(dash, line.price), true)}
    ${cell('discount', line.discount === 0 ? '' : money(dash, line.discount), true)}${cell('vatRate', formatVatRate(dash.lang, line.vatPercent), true)}
    ${cell('lineTotal', money(dash, total), true)}</tr>`;
}

/** The lines a receipt lists (or a payment link gives each order), its shipping last; `caption` says whose. */
export function linesTable(dash: Dash, receipt: Pick<Receipt, 'items' | 'shipping'>, caption: MessageKey): Html {
  const { t } = dash;
  const lines: Line[] = receipt.items.map((item) => ({ ...item, shipping: false }));
  if (receipt.shipping !== null) lines.push({ ...shippingLine(receipt.shipping), shipping: true });
  const heads: Array<[MessageKey, boolean]> = [['item', false], ['ikpuCode', false], ['packageCode', false], ['quantity', true], ['price', true], ['discount', true], ['vatRate', true], ['lineTotal', true]];
  return html`<div class="table-wrap"><table class="receipt-lines"><caption>${t(caption)}</caption>
<thead><tr>${heads.map(([label, num]) => html`<th scope="col"${num ? html` class="num"` : ''}>${t(label)}</th>`)}</tr></thead>
<tbody>${lines.map((line) => lineRow(dash, line))}</tbody></table></div>`;
}

/**
 * The payment's receipts, its sale first. A succeeded payment without one was made without lines (the merchant
 * fiscalizes elsewhere), which the page says; a payment that did not succeed has none to speak of.
 */
export function paymentReceipts(dash: Dash, intent: Pick<PaymentIntent, 'status'>, receipts: Receipt[]): Html | '' {
  const { t } = dash;
  if (receipts.length === 0) return intent.status === 'SUCCEEDED' ? html`<h2>${t('fiscalReceipts')}</h2><p class="empty">${t('noReceipt')}</p>` : '';
  const sale = receipts.find((receipt) => receipt.type === 'sale') ?? receipts[0]!;
  return html`<h2>${t('fiscalReceipts')}</h2>
<div class="receipts">${receipts.map((receipt) => receiptCard(dash, receipt))}</div>
<h3>${t('receiptLines')}</h3>${linesTable(dash, sale, 'receiptLinesCaption')}`;
}
