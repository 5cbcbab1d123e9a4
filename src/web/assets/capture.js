// Shared by the hosted pages: the public session API, card-field formatting and checks, language, and a tiny DOM helper.
// Everything merchant- or buyer-supplied is written with textContent, never as markup.
import { DEFAULT_LANGUAGE, LANGUAGES, textsFor } from './i18n.js';

export function sessionApi(token) {
  const base = `/checkout/v1/sessions/${encodeURIComponent(token)}`;
  const call = async (method, path, body) => {
    try {
      const response = await fetch(base + path, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
        credentials: 'omit',
      });
      return { status: response.status, body: await response.json() };
    } catch {
      return { status: 0, body: { code: 'network' } };
    }
  };
  return {
    state: () => call('GET', ''),
    submitCard: (card) => call('POST', '/card', card),
    submitCode: (code) => call('POST', '/code', { code }),
    resend: () => call('POST', '/code/resend'),
  };
}

export const digitsOnly = (text) => text.replace(/\D+/g, '');

export function networkOf(digits) {
  if (digits.startsWith('8600')) return 'uzcard';
  if (digits.startsWith('9860')) return 'humo';
  return null;
}

export function luhnValid(digits) {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** `8600000000000007` → `8600 0000 0000 0007`. */
export const formatPan = (digits) => digits.slice(0, 16).replace(/(\d{4})(?=\d)/g, '$1 ');

/** `1230` → `12/30`, as the buyer types. */
export function formatExpiry(digits) {
  const d = digits.slice(0, 4);
  return d.length > 2 ? `${d.slice(0, 2)}/${d.slice(2)}` : d;
}

/** The country code the page shows before the phone field: cards here are tied to Uzbek mobile numbers. */
export const COUNTRY_CODE = '998';
const NATIONAL_DIGITS = 9;
/** What the server takes (card-data.ts): the code and the 9 national digits. */
const UZBEK_MOBILE = /^998\d{9}$/;

/**
 * The national digits of a phone as typed or pasted. A full number (`+998 90 123-45-67`), or one whose code was typed
 * again after the page's own, loses its leading codes, so that the code is never sent twice.
 */
export function nationalPhone(text) {
  let digits = digitsOnly(text);
  while (digits.length > NATIONAL_DIGITS && digits.startsWith(COUNTRY_CODE)) digits = digits.slice(COUNTRY_CODE.length);
  return digits;
}

/** `901234567` → `90 123 45 67`, as the buyer types; digits past the ninth stay, for the check to refuse. */
export function formatPhone(digits) {
  const groups = /^(\d{1,2})(\d{1,3})?(\d{1,2})?(\d*)$/.exec(digits);
  return groups ? groups.slice(1).filter(Boolean).join(' ') : '';
}

/**
 * Writes the phone field's text again as its national digits, grouped, with the caret after the same digit it was
 * after (less the codes dropped before it); returns the digits.
 */
export function enterPhone(input) {
  const typed = digitsOnly(input.value);
  const beforeCaret = digitsOnly(input.value.slice(0, input.selectionStart ?? input.value.length)).length;
  const digits = nationalPhone(input.value);
  input.value = formatPhone(digits);
  const caret = positionAfterDigits(input.value, beforeCaret - (typed.length - digits.length));
  input.setSelectionRange(caret, caret);
  return digits;
}

/** The position in `text` just after its `count`th digit (0 for none). */
function positionAfterDigits(text, count) {
  let seen = 0;
  for (let position = 0; position < text.length; position++) {
    if (seen >= count) return position;
    if (/\d/.test(text[position])) seen++;
  }
  return text.length;
}

/** The same checks the server makes, so most mistakes show before a round trip (the server still decides). */
export function checkCard({ pan, expiry, phone }, now = new Date()) {
  const errors = {};
  if (pan.length !== 16) errors.pan = 'panLength';
  else if (!luhnValid(pan)) errors.pan = 'panLuhn';
  else if (!networkOf(pan)) errors.pan = 'panNetwork';
  const match = /^(\d{2})(\d{2})$/.exec(expiry);
  if (!match || Number(match[1]) < 1 || Number(match[1]) > 12) errors.expiry = 'expiryFormat';
  else if ((2000 + Number(match[2])) * 12 + Number(match[1]) < now.getFullYear() * 12 + now.getMonth() + 1) errors.expiry = 'expired';
  if (!UZBEK_MOBILE.test(phone)) errors.phone = 'phone';
  return errors;
}

/** The cookie the server reads to speak the buyer's choice on every hosted page (pages.ts). */
const LANGUAGE_COOKIE = 'tolov_pay_lang';
const LANGUAGE_COOKIE_MAX_AGE_SECONDS = 365 * 86_400;

/** Only the languages' own names: `in` would also accept what every object inherits (`constructor`, `toString`). */
const isLanguage = (code) => typeof code === 'string' && Object.hasOwn(LANGUAGES, code);

/** The language the server wrote the page in: ?lang=, else the buyer's earlier choice, else the browser's. */
export function initialLanguage() {
  const lang = document.documentElement.lang;
  return isLanguage(lang) ? lang : DEFAULT_LANGUAGE;
}

export function rememberLanguage(language) {
  const secure = location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = `${LANGUAGE_COOKIE}=${language}; Path=/; Max-Age=${LANGUAGE_COOKIE_MAX_AGE_SECONDS}; SameSite=Lax${secure}`;
}

/** Renders the language switcher into `nav`; `onChange` re-renders the page. */
export function languageSwitcher(nav, current, onChange) {
  nav.replaceChildren(
    ...Object.entries(LANGUAGES).map(([code, name]) =>
      el('button', { type: 'button', lang: code, 'aria-pressed': String(code === current), onclick: () => onChange(code) }, name),
    ),
  );
}

export { textsFor };

/** `el('p', { class: 'note' }, 'text', child)`: attributes, `on…` handlers, and children as text or nodes. */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

/**
 * A labelled input with its hint and inline error, wired for screen readers. A `prefix` (the phone's +998) stands
 * fixed before the input, outside its text; as a second label it is read with the field's name and focuses it.
 */
export function field({ id, label, hint, error, prefix, ...input }) {
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const box = el('input', {
    id,
    name: id,
    'aria-invalid': error ? 'true' : undefined,
    'aria-describedby': [hintId, errorId].filter(Boolean).join(' ') || undefined,
    ...input,
  });
  return el(
    'div',
    { class: error ? 'field invalid' : 'field' },
    el('label', { for: id }, label),
    hint ? el('p', { class: 'hint', id: hintId }, hint) : null,
    prefix ? el('div', { class: 'affixed' }, el('label', { class: 'prefix', for: id }, prefix), box) : box,
    error ? el('p', { class: 'error', id: errorId, role: 'alert' }, error) : null,
  );
}
