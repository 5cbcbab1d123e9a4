// The form that makes a payment link: what the buyer pays for, a fixed amount or the buyer's own within bounds, how many
// at once, and, with a fixed amount, each order's fiscal lines. It is read into the API's body here, each mistake said
// at its field in the page's words (the API's schema is not run for a page); what only the service checks (the VAT
// rates Tolov takes, a live product's lines) comes back from it and is said at its field too.
import type { ErrorBody } from '../../../core/errors.js';
import { AMOUNT_MAX } from '../../../core/schemas.js';
import { CHOSEN_AMOUNT_MAX, CHOSEN_AMOUNT_MIN, QUANTITY_MAX, type CreatePaymentLinkBody } from '../../../modules/payment-links/schema.js';
import { ITEM_COUNT_MAX, type ReceiptRequest } from '../../../modules/receipts/schema.js';
import { field, type Dash } from '../context.js';
import type { Form } from '../deps.js';
import { html, type Html } from '../../html.js';
import { formatCount, type MessageKey } from '../i18n.js';
import { csrfField, formKeyField, notice } from '../layout.js';
import { formField, lineOf, tiyinOfTyped, type FieldSpec } from './form-fields.js';
import { wholeMoney } from './lists.js';

/** Receipt lines the form offers: six fields each, so that the whole form stays within the 50 fields a form may post. */
export const LINES_SHOWN = 5;
export const DESCRIPTION_MAX = 500;
const TITLE_MAX = 128;
/** Uzbekistan's standard VAT rate, the one most lines carry. */
const VAT_DEFAULT = '12';
const CONTROL_CHARACTER = /\p{Cc}/u;

const LINE_FIELDS = ['title', 'code', 'packageCode', 'vatPercent', 'count', 'price'] as const;
type LineField = (typeof LINE_FIELDS)[number];
type TypedLine = Record<LineField, string>;

/** The form as typed, every field as posted. */
export interface Typed {
  description: string;
  pricing: 'fixed' | 'chosen';
  amount: string;
  amountMin: string;
  amountMax: string;
  quantityMax: string;
  lines: TypedLine[];
}

/** What is wrong, by the field it is said at (`line2-code`); `lines` for the lines together, `form` above the form. */
export type FieldErrors = Partial<Record<string, string>>;

const emptyLine = (): TypedLine => ({ title: '', code: '', packageCode: '', vatPercent: VAT_DEFAULT, count: '1', price: '' });
export const EMPTY_FORM: Typed = {
  description: '',
  pricing: 'fixed',
  amount: '',
  amountMin: '',
  amountMax: '',
  quantityMax: '',
  lines: Array.from({ length: LINES_SHOWN }, emptyLine),
};

const lineName = (index: number, name: LineField) => `line${index}-${name}`;
/** A line counts once any of what names or prices it is typed; its defaults (a count of 1, a rate of 12%) do not. */
const given = (line: TypedLine) => line.title !== '' || line.code !== '' || line.packageCode !== '' || line.price !== '';
const digits = (form: Form | undefined, name: string) => field(form, name).replace(/\s/g, '');

export function typedOf(form: Form | undefined): Typed {
  const line = (index: number): TypedLine => ({
    title: lineOf(form, lineName(index, 'title')),
    code: digits(form, lineName(index, 'code')),
    packageCode: digits(form, lineName(index, 'packageCode')),
    vatPercent: digits(form, lineName(index, 'vatPercent')),
    count: digits(form, lineName(index, 'count')),
    price: field(form, lineName(index, 'price')),
  });
  return {
    description: lineOf(form, 'description'),
    pricing: field(form, 'pricing') === 'chosen' ? 'chosen' : 'fixed',
    amount: field(form, 'amount'),
    amountMin: field(form, 'amountMin'),
    amountMax: field(form, 'amountMax'),
    quantityMax: digits(form, 'quantityMax'),
    lines: Array.from({ length: LINES_SHOWN }, (_, index) => line(index)),
  };
}

/** The body the form stands for, with the form's line of each receipt item (an empty line in between is skipped). */
export interface Read {
  body: CreatePaymentLinkBody;
  itemLines: number[];
}

/** A typed amount in tiyin: its value from `min` to `max`, or what is wrong with it (`outside`: out of those bounds). */
function amountIn(dash: Dash, typed: string, bounds: { min: number; max: number }, outside: (tiyin: bigint) => string): { value: number } | { error: string } {
  const tiyin = tiyinOfTyped(typed);
  if (tiyin === null) return { error: dash.t('payOutAmountInvalid') };
  if (tiyin < BigInt(bounds.min) || tiyin > BigInt(bounds.max)) return { error: outside(tiyin) };
  return { value: Number(tiyin) };
}

/** The fixed amount; or what is wrong with it, said at its field. */
function fixedAmountOf(dash: Dash, typed: string, errors: FieldErrors): Pick<CreatePaymentLinkBody, 'amount'> {
  const { t } = dash;
  if (typed === '') {
    errors.amount = t('linkAmountRequired');
    return {};
  }
  const read = amountIn(dash, typed, { min: 1, max: AMOUNT_MAX }, (tiyin) => (tiyin === 0n ? t('linkAmountZero') : t('payOutAmountTooLarge', { max: wholeMoney(dash, AMOUNT_MAX) })));
  if ('value' in read) return { amount: read.value };
  errors.amount = read.error;
  return {};
}

/** The bounds of the buyer's amount, each optional; or what is wrong with them, said at their fields. */
function boundsOf(dash: Dash, typed: Typed, errors: FieldErrors): Pick<CreatePaymentLinkBody, 'amountMin' | 'amountMax'> {
  const { t } = dash;
  const outside = () => t('linkBoundOutOfRange', { min: wholeMoney(dash, CHOSEN_AMOUNT_MIN), max: wholeMoney(dash, CHOSEN_AMOUNT_MAX) });
  const bounds: Pick<CreatePaymentLinkBody, 'amountMin' | 'amountMax'> = {};
  for (const name of ['amountMin', 'amountMax'] as const) {
    if (typed[name] === '') continue;
    const read = amountIn(dash, typed[name], { min: CHOSEN_AMOUNT_MIN, max: CHOSEN_AMOUNT_MAX }, outside);
    if ('value' in read) bounds[name] = read.value;
    else errors[name] = read.error;
  }
  if (bounds.amountMin !== undefined && bounds.amountMax !== undefined && bounds.amountMin > bounds.amountMax) errors.amountMin = t('linkBoundsReversed');
  return bounds;
}

type Item = ReceiptRequest['items'][number];

/** A typed receipt line, each field checked as the API's schema checks it; null when any is wrong. */
function itemOf(dash: Dash, line: TypedLine, index: number, errors: FieldErrors): Item | null {
  const { t } = dash;
  const wrong: Partial<Record<LineField, string>> = {};
  if (line.title === '' || line.title.length > TITLE_MAX || CONTROL_CHARACTER.test(line.title)) wrong.title = t('linkLineTitleInvalid');
  if (!/^\d{17}$/.test(line.code)) wrong.code = t('linkLineCodeInvalid');
  if (!/^\d{1,20}$/.test(line.packageCode)) wrong.packageCode = t('linkLinePackageInvalid');
  const vatPercent = /^\d{1,3}$/.test(line.vatPercent) ? Number(line.vatPercent) : Number.NaN;
  if (!(vatPercent <= 100)) wrong.vatPercent = t('linkLineVatInvalid');
  const count = /^\d{1,6}$/.test(line.count) ? Number(line.count) : 0;
  if (count < 1 || count > ITEM_COUNT_MAX) wrong.count = t('linkLineCountInvalid', { max: formatCount(dash.lang, ITEM_COUNT_MAX) });
  const price = tiyinOfTyped(line.price);
  if (price === null || price > BigInt(AMOUNT_MAX)) wrong.price = t('linkLinePriceInvalid');
  for (const [name, text] of Object.entries(wrong)) errors[lineName(index, name as LineField)] = text;
  if (Object.keys(wrong).length > 0) return null;
  return { title: line.title, price: Number(price), count, code: line.code, packageCode: line.packageCode, vatPercent };
}

/** The receipt of a fixed amount, its lines adding up to it; none when no line is typed. */
function receiptOf(dash: Dash, typed: Typed, amount: number | undefined, errors: FieldErrors): { receipt?: ReceiptRequest; itemLines: number[] } {
  const itemLines = typed.lines.flatMap((line, index) => (given(line) ? [index] : []));
  if (itemLines.length === 0) return { itemLines };
  if (typed.pricing === 'chosen') {
    errors.lines = dash.t('linkLinesNeedAmount');
    return { itemLines };
  }
  const items = itemLines.map((index) => itemOf(dash, typed.lines[index]!, index, errors));
  if (items.some((item) => item === null) || amount === undefined) return { itemLines };
  const total = items.reduce((sum, item) => sum + BigInt(item!.price) * BigInt(item!.count), 0n);
  if (total !== BigInt(amount)) errors.lines = dash.t('linkLinesMismatch', { total: wholeMoney(dash, total), amount: wholeMoney(dash, amount) });
  return { receipt: { items: items as Item[] }, itemLines };
}

/** What is wrong with a link's description, as the API's schema would refuse it; undefined when nothing is. */
export function descriptionError(dash: Dash, description: string): string | undefined {
  const fits = description !== '' && description.length <= DESCRIPTION_MAX && !CONTROL_CHARACTER.test(description);
  return fits ? undefined : dash.t('linkDescriptionInvalid');
}

/** The API's body the form stands for; or what is wrong with each field. */
export function readForm(dash: Dash, typed: Typed): Read | { errors: FieldErrors } {
  const { t } = dash;
  const { description } = typed;
  const wrongDescription = descriptionError(dash, description);
  const errors: FieldErrors = wrongDescription === undefined ? {} : { description: wrongDescription };
  const price = typed.pricing === 'fixed' ? fixedAmountOf(dash, typed.amount, errors) : boundsOf(dash, typed, errors);
  const quantityMax = typed.quantityMax === '' ? undefined : /^\d{1,7}$/.test(typed.quantityMax) ? Number(typed.quantityMax) : 0;
  if (quantityMax !== undefined && (quantityMax < 1 || quantityMax > QUANTITY_MAX)) errors.quantityMax = t('linkQuantityInvalid', { max: formatCount(dash.lang, QUANTITY_MAX) });
  const { receipt, itemLines } = receiptOf(dash, typed, 'amount' in price ? price.amount : undefined, errors);
  if (Object.keys(errors).length > 0) return { errors };
  return { body: { description, ...price, ...(receipt ? { receipt } : {}), ...(quantityMax === undefined ? {} : { quantityMax }) }, itemLines };
}

const VAT_REFUSED = /^receipt\.items\.(\d+)\.vatPercent$/;

/** The service's refusal of a form read right, said at the field it concerns, or above the form. */
export function refusalErrors(dash: Dash, error: Pick<ErrorBody, 'code' | 'param'>, itemLines: number[]): FieldErrors {
  const { t } = dash;
  const vat = VAT_REFUSED.exec(error.param ?? '');
  const line = vat ? itemLines[Number(vat[1])] : undefined;
  if (error.code === 'VALIDATION_ERROR' && line !== undefined) return { [lineName(line, 'vatPercent')]: t('linkLineVatRefused') };
  if (error.code === 'RECEIPT_REQUIRED') return { lines: t('linkReceiptRequired') };
  if (error.code === 'PRODUCT_SUSPENDED') return { form: t('linkRefusedSuspended') };
  return { form: t('actionRefused', { code: error.code }) };
}

const AMOUNT = html`class="amount" inputmode="decimal" autocomplete="off" maxlength="30"`;
const DIGIT_FIELD = (size: number) => html`class="digits-${size}" inputmode="numeric" autocomplete="off" maxlength="${size}"`;

const SPECS = {
  description: { name: 'description', label: 'description', hint: 'linkDescriptionHint', attributes: html`class="wide" maxlength="${DESCRIPTION_MAX}"` },
  amount: { name: 'amount', label: 'linkAmount', hint: 'linkAmountHint', attributes: AMOUNT, optional: true },
  amountMin: { name: 'amountMin', label: 'linkAmountMin', attributes: AMOUNT, optional: true },
  amountMax: { name: 'amountMax', label: 'linkAmountMax', attributes: AMOUNT, optional: true },
  quantityMax: { name: 'quantityMax', label: 'linkQuantityMax', hint: 'linkQuantityMaxHint', attributes: DIGIT_FIELD(7), optional: true },
} satisfies Record<string, FieldSpec<string>>;

const LINE_SPECS: Record<LineField, { label: MessageKey; attributes: Html }> = {
  title: { label: 'linkLineTitle', attributes: html`class="wide" maxlength="${TITLE_MAX}"` },
  code: { label: 'ikpuCode', attributes: html`class="digits-17" inputmode="numeric" autocomplete="off" maxlength="21"` },
  packageCode: { label: 'packageCode', attributes: DIGIT_FIELD(20) },
  vatPercent: { label: 'linkLineVat', attributes: DIGIT_FIELD(3) },
  count: { label: 'linkLineCount', attributes: DIGIT_FIELD(6) },
  price: { label: 'linkLinePrice', attributes: AMOUNT },
};

/** Writes the form's fields: each with what was typed and what is wrong with it, the first wrong one in focus. */
type Writer = (spec: FieldSpec<string>, value: string) => Html;

function writerOf(dash: Dash, errors: FieldErrors): Writer {
  const first = Object.keys(errors).find((name) => name !== 'form' && name !== 'lines');
  return (spec, value) => html`<div class="field">${formField(dash, 'link', spec, { value, error: errors[spec.name], focus: spec.name === first })}</div>`;
}

function pricing(dash: Dash, typed: Typed, write: Writer): Html {
  const { t } = dash;
  const choice = (value: Typed['pricing'], label: MessageKey, fields: Html) => html`<div class="pricing-choice">
    <label class="check"><input type="radio" name="pricing" value="${value}"${typed.pricing === value ? html` checked` : ''}> ${t(label)}</label>
    <div class="pricing-fields">${fields}</div></div>`;
  const bounds = html`<p class="hint">${t('linkChosenHint', { min: wholeMoney(dash, CHOSEN_AMOUNT_MIN), max: wholeMoney(dash, CHOSEN_AMOUNT_MAX) })}</p>
    <div class="bounds">${write(SPECS.amountMin, typed.amountMin)}${write(SPECS.amountMax, typed.amountMax)}</div>`;
  return html`<fieldset class="pricing"><legend>${t('linkPrice')}</legend>
  ${choice('fixed', 'linkFixedAmount', write(SPECS.amount, typed.amount))}
  ${choice('chosen', 'linkChosenAmount', bounds)}
</fieldset>`;
}

/** The receipt's lines, each folded until it is used (the first open), all of them folded until one is typed. */
function receiptLines(dash: Dash, typed: Typed, errors: FieldErrors, write: Writer): Html {
  const { t } = dash;
  const wrong = (index: number) => LINE_FIELDS.some((name) => errors[lineName(index, name)] !== undefined);
  const lines = typed.lines.map((line, index) => {
    const label = t('linkReceiptLine', { number: index + 1 });
    const fields = LINE_FIELDS.map((name) => write({ name: lineName(index, name), ...LINE_SPECS[name], optional: true }, line[name]));
    const open = index === 0 || given(line) || wrong(index);
    return html`<details class="receipt-line"${open ? html` open` : ''}><summary>${label}</summary><div class="line-fields" role="group" aria-label="${label}">${fields}</div></details>`;
  });
  const open = typed.lines.some(given) || errors.lines !== undefined;
  return html`<details class="link-receipt"${open ? html` open` : ''}><summary>${t('linkReceipt')}</summary>
  <p class="hint">${t('linkReceiptHint')}</p>
  ${errors.lines === undefined ? '' : html`<p class="field-error" role="alert">${errors.lines}</p>`}
  ${lines}
  <p class="hint">${t('linkLinesMore', { max: LINES_SHOWN })}</p>
</details>`;
}

/** The form, as typed, with what is wrong: a line above it, and each mistake at its field. */
export function linkForm(dash: Dash, typed: Typed, errors: FieldErrors = {}): Html {
  const { t } = dash;
  const write = writerOf(dash, errors);
  const fieldsWrong = Object.keys(errors).some((name) => name !== 'form');
  return html`<form class="card link-form" method="post" action="/dashboard/payment-links" aria-labelledby="link-form-title">${csrfField(dash)}${formKeyField()}
  <h2 id="link-form-title">${t('linkForm')}</h2>
  ${notice('error', errors.form ?? (fieldsWrong ? t('linkFieldsInvalid') : undefined))}
  ${write(SPECS.description, typed.description)}
  ${pricing(dash, typed, write)}
  ${write(SPECS.quantityMax, typed.quantityMax)}
  ${receiptLines(dash, typed, errors, write)}
  <button type="submit" class="primary">${t('createPaymentLink')}</button>
</form>`;
}
