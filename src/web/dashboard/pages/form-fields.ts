// The fields of the forms that name where money goes (the payout account, the activation request) or what a buyer pays
// (a payment link), written one way: each under its label, what is wrong with it read out with it (and in focus when it
// is the first), then its hint; and so'm as people type them.
import { AMOUNT_MAX } from '../../../core/schemas.js';
import { html, type Html } from '../../html.js';
import { field, type Dash } from '../context.js';
import type { Form } from '../deps.js';
import type { MessageKey } from '../i18n.js';
import { money } from './lists.js';

/** Twenty digits, with the spaces a copy from a bank's details may bring (the server takes them out). */
const ACCOUNT_NUMBER_PATTERN = String.raw`\s*(?:[0-9]\s*){20}`;

/** The numbers' fields, each as wide as its digits, with the phone's digit keyboard. */
export const DIGITS = {
  mfo: html`class="digits-5" inputmode="numeric" pattern="[0-9]{5}" maxlength="5"`,
  accountNumber: html`class="digits-20" inputmode="numeric" pattern="${ACCOUNT_NUMBER_PATTERN}" maxlength="40"`,
  tin: html`class="digits-9" inputmode="numeric" pattern="[0-9]{9}" maxlength="9"`,
  code: html`class="digits-6" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" maxlength="7"`,
};

export interface FieldSpec<Name extends string> {
  name: Name;
  label: MessageKey;
  /** What the field takes, under it; none for a field its group's hint explains (a receipt line's). */
  hint?: MessageKey;
  /** The control's own attributes: its width, its pattern, its length. */
  attributes: Html;
  /** A field that may be left empty (the server fills it in). */
  optional?: boolean;
  /** A select of these values (its first option, empty, asks for a choice), or a textarea; an input otherwise. */
  control?: { kind: 'select'; prompt: MessageKey; choices: ReadonlyArray<{ value: string; label: MessageKey }> } | { kind: 'textarea' };
}

export interface FieldState {
  value: string;
  error: string | undefined;
  /** The first field with an error: the page opens on it. */
  focus: boolean;
  /** A hint in place of the spec's own. */
  hint?: string;
}

function control<Name extends string>(dash: Dash, id: string, spec: FieldSpec<Name>, state: FieldState): Html {
  const described = [state.error === undefined ? '' : `${id}-error`, hintOf(dash, spec, state) === undefined ? '' : `${id}-hint`].filter(Boolean).join(' ');
  const invalid = state.error === undefined ? '' : html` aria-invalid="true"${state.focus ? html` autofocus` : ''}`;
  const common = html`id="${id}" name="${spec.name}"`;
  const rest = html`${spec.optional ? '' : html` required`}${described ? html` aria-describedby="${described}"` : ''}${invalid}`;
  const kind = spec.control;
  if (kind?.kind === 'textarea') return html`<textarea ${common} ${spec.attributes}${rest}>${state.value}</textarea>`;
  if (kind?.kind === 'select') {
    const choices = kind.choices.map((choice) => html`<option value="${choice.value}"${choice.value === state.value ? html` selected` : ''}>${dash.t(choice.label)}</option>`);
    return html`<select ${common} ${spec.attributes}${rest}><option value="">${dash.t(kind.prompt)}</option>${choices}</select>`;
  }
  return html`<input ${common} value="${state.value}" ${spec.attributes}${rest}>`;
}

const hintOf = (dash: Dash, spec: FieldSpec<string>, state: FieldState) => state.hint ?? (spec.hint === undefined ? undefined : dash.t(spec.hint));

/** A field of a form whose ids start with `prefix`: its label, its control, what is wrong with it, its hint. */
export function formField<Name extends string>(dash: Dash, prefix: string, spec: FieldSpec<Name>, state: FieldState): Html {
  const id = `${prefix}-${spec.name}`;
  const hint = hintOf(dash, spec, state);
  return html`<label for="${id}">${dash.t(spec.label)}</label>
  ${control(dash, id, spec, state)}
  ${state.error === undefined ? '' : html`<p class="field-error" id="${id}-error">${state.error}</p>`}${hint === undefined ? '' : html`<p class="hint" id="${id}-hint">${hint}</p>`}`;
}

/** A form's field as digits, without the spaces a copy from a bank's details brings. */
export const digitsOf = (form: Form | undefined, name: string) => field(form, name).replace(/\s/g, '');

/** A form's field as one line of text: its runs of spaces and line breaks made one space. */
export const lineOf = (form: Form | undefined, name: string) => field(form, name).replace(/\s+/g, ' ');

/**
 * So'm as a person types them, in tiyin: digits, grouped by spaces (or by commas in threes, as English writes them),
 * with at most two decimals after a point or a comma. A comma before exactly three digits groups them: "1,500" is
 * 1,500 so'm, never 1.5. Null when the text is no such amount.
 */
export function tiyinOfTyped(typed: string): bigint | null {
  const text = typed.replace(/\s/g, '');
  const match = /^(\d+)(?:[.,](\d{1,2}))?$/.exec(text) ?? /^(\d{1,3}(?:,\d{3})+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) return null;
  return BigInt(match[1]!.replaceAll(',', '')) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
}

/**
 * An amount field that may be left empty (the whole of what the form acts on: the available balance, the hold), in
 * tiyin; or what is wrong with it.
 */
export function optionalAmountOf(dash: Dash, typed: string): { amount: number | undefined } | { error: string } {
  if (typed === '') return { amount: undefined };
  const tiyin = tiyinOfTyped(typed);
  if (tiyin === null) return { error: dash.t('payOutAmountInvalid') };
  if (tiyin <= 0n) return { error: dash.t('payOutAmountZero') };
  if (tiyin > BigInt(AMOUNT_MAX)) return { error: dash.t('payOutAmountTooLarge', { max: money(dash, AMOUNT_MAX) }) };
  return { amount: Number(tiyin) };
}
