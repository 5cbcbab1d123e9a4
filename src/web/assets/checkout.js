// The hosted checkout page, for both kinds of session: binding a card (/bind/…) and paying an order (/pay/…).
// Card → SMS code → outcome, on the public session calls only; the session state says which kind this is.
import {
  checkCard,
  COUNTRY_CODE,
  digitsOnly,
  el,
  enterPhone,
  field,
  formatExpiry,
  formatPan,
  formatPhone,
  initialLanguage,
  languageSwitcher,
  networkOf,
  rememberLanguage,
  sessionApi,
  textsFor,
} from './capture.js';
import { describeLine, formatAmount, formatDateTime } from './i18n.js';
import { clock, isOpen, screenOf } from './screens.js';

/** A paid page stays this long before returning to the shop: time to glance at the receipt (the button goes at once). */
const RETURN_DELAY_MS = 4000;
/**
 * While the bank confirms a payment, or the tax authority registers its receipt, the page asks again this often, for
 * at most so many times: the bank's answer is worth waiting ten minutes for; a receipt late by two minutes is still
 * on its printable page, which the buyer can open later.
 */
const POLL_INTERVAL_MS = 3000;
const POLLS_MAX = { processing: 200, receipt: 40 };
/** The receipt's QR code, as the page draws it (its image is square). */
const QR_SIZE_PX = 152;
const NETWORK_NAMES = { uzcard: 'Uzcard', humo: 'Humo' };
/** A session's attempts (the service's CARD_ATTEMPTS_MAX and CODE_ATTEMPTS_MAX): what is left is told after a mistake. */
const CARD_ATTEMPTS = 3;
const CODE_ATTEMPTS = 5;

const token = decodeURIComponent(location.pathname.split('/').pop() ?? '');
const api = sessionApi(token);
const view = document.getElementById('view');
const sheet = view.closest('main');
/** The shop's address, given with the page when the order or binding has one. */
const SHOP_URL = sheet.dataset.returnUrl ?? null;

const page = {
  language: initialLanguage(),
  /** The session as the server wrote the page (none for a link that names none), then as the session calls say. */
  session: sheet.dataset.session ? JSON.parse(sheet.dataset.session) : null,
  /** Why the session calls answer no more: 'notFound', 'expired' or null. */
  gone: sheet.dataset.session ? null : 'notFound',
  errors: {},
  notice: null,
  busy: false,
  polls: { processing: 0, receipt: 0 },
  /** Session calls started so far: a look at the state answered after a later call started may be older than that call's answer. */
  calls: 0,
  /** `phone` holds the national digits only: the page shows the country code fixed before the field. */
  form: { pan: '', expiry: '', phone: '', code: '', saveCard: false },
};

const t = () => textsFor(page.language);
const isOrder = () => page.session?.kind === 'order';
const amount = () => formatAmount(page.session.order.amount, page.language);
const timers = { resend: null, clock: null, poll: null, leave: null };

function setLanguage(language) {
  page.language = language;
  rememberLanguage(language);
  render();
}

function errorText(code) {
  const errors = t().errors;
  return errors[code] ?? errors.generic;
}

/** Maps an API error onto the page: a field's own message, an outcome, or a notice above the form. */
function showError(reply) {
  const { code, param } = reply.body;
  if (reply.status === 410) page.gone = 'expired';
  else if (reply.status === 404) page.gone = 'notFound';
  // The session's state, read next, says that the bank refused and why.
  else if (code === 'PAYMENT_FAILED') return;
  else if (code === 'INVALID_CARD' && (param === 'pan' || param === 'expiry')) {
    page.errors = { [param]: param === 'pan' ? 'panLuhn' : /expired/i.test(reply.body.message) ? 'expired' : 'expiryFormat' };
  } else if (code === 'VALIDATION_ERROR' && param === 'phone') page.errors = { phone: 'phone' };
  else if (code === 'WRONG_CODE') page.errors = { code: 'WRONG_CODE' };
  else page.notice = { kind: 'error', code: code ?? 'generic' };
}

/** Reads the session again and draws it; `quiet`: an answer that changes nothing is not drawn, and says 'unchanged'. */
async function refresh(quiet = false) {
  const asked = ++page.calls;
  const reply = await api.state();
  if (asked !== page.calls) return;
  if (quiet && reply.status === 200 && JSON.stringify(reply.body) === JSON.stringify(page.session)) return 'unchanged';
  if (reply.status === 200) page.session = reply.body;
  else showError(reply);
  render();
}

async function submit(action) {
  if (page.busy) return;
  page.busy = true;
  page.notice = null;
  render();
  page.calls += 1;
  const reply = await action();
  page.busy = false;
  if (reply.status === 200) {
    page.session = reply.body;
    page.errors = {};
  } else {
    showError(reply);
    // A refusal may have used an attempt, or the session moved on (a second tab, a limit): show what it is now.
    if (reply.status >= 400 && reply.status < 500 && !page.gone) await refresh();
  }
  render();
}

function onCard(event) {
  event.preventDefault();
  const card = { pan: digitsOnly(page.form.pan), expiry: digitsOnly(page.form.expiry), phone: COUNTRY_CODE + page.form.phone };
  page.errors = checkCard(card);
  if (Object.keys(page.errors).length > 0) return render();
  const saveCard = page.session.canSaveCard && page.form.saveCard ? { saveCard: true } : {};
  void submit(() => api.submitCard({ ...card, expiry: formatExpiry(card.expiry), ...saveCard }));
}

function onCode(event) {
  event.preventDefault();
  const code = digitsOnly(page.form.code);
  if (code.length === 0) {
    page.errors = { code: 'code' };
    return render();
  }
  page.form.code = '';
  void submit(() => api.submitCode(code));
}

async function onResend() {
  await submit(api.resend);
  if (!page.notice) page.notice = { kind: 'info', text: t().resent };
  render();
}

/** Shows the network of the number typed so far (by its BIN), or a plain card. */
function showNetwork(badge, pan) {
  const network = networkOf(digitsOnly(pan));
  badge.src = network ? `/assets/${network}.svg` : '/assets/card.svg';
  badge.alt = network ? NETWORK_NAMES[network] : '';
}

/** The card number, with the badge of its network drawn as it is typed. */
function panField(text, errors) {
  const badge = el('img', { class: 'network', width: 48, height: 30 });
  showNetwork(badge, page.form.pan);
  const pan = field({
    id: 'pan',
    label: text.pan,
    error: errors.pan && errorText(errors.pan),
    autocomplete: 'cc-number',
    inputmode: 'numeric',
    placeholder: '8600 0000 0000 0000',
    maxlength: 19,
    value: formatPan(digitsOnly(page.form.pan)),
    oninput: (event) => {
      const input = event.target;
      page.form.pan = input.value;
      input.value = formatPan(digitsOnly(input.value));
      showNetwork(badge, input.value);
    },
  });
  pan.querySelector('input').after(badge);
  pan.classList.add('with-badge');
  return pan;
}

function expiryField(text, errors) {
  return field({
    id: 'expiry',
    label: text.expiry,
    error: errors.expiry && errorText(errors.expiry),
    autocomplete: 'cc-exp',
    inputmode: 'numeric',
    placeholder: text.expiryHint,
    maxlength: 5,
    value: formatExpiry(digitsOnly(page.form.expiry)),
    oninput: (event) => {
      page.form.expiry = event.target.value;
      event.target.value = formatExpiry(digitsOnly(event.target.value));
    },
  });
}

function phoneField(text, errors) {
  return field({
    id: 'phone',
    label: text.phone,
    hint: text.phoneHint,
    error: errors.phone && errorText(errors.phone),
    prefix: `+${COUNTRY_CODE}`,
    type: 'tel',
    autocomplete: 'tel',
    inputmode: 'tel',
    // Room for a whole number pasted as written (`+998 (90) 123-45-67`): it is cut down to its national digits.
    maxlength: 20,
    value: formatPhone(page.form.phone),
    oninput: (event) => (page.form.phone = enterPhone(event.target)),
  });
}

function saveCardBox(text) {
  return el(
    'label',
    { class: 'check', for: 'save-card' },
    el('input', {
      type: 'checkbox',
      id: 'save-card',
      checked: page.form.saveCard,
      onchange: (event) => (page.form.saveCard = event.target.checked),
    }),
    text.saveCard,
  );
}

function cardForm(session) {
  const text = t();
  const errors = page.errors;
  return el(
    'form',
    { novalidate: true, onsubmit: onCard },
    isOrder() ? null : el('p', { class: 'lead' }, text.bindLead),
    panField(text, errors),
    el('div', { class: 'row' }, expiryField(text, errors)),
    phoneField(text, errors),
    session.canSaveCard ? saveCardBox(text) : null,
    // Saving a card, asked for here or by a binding, lets the merchant charge it later: the buyer is told so, by name.
    !isOrder() || session.canSaveCard ? el('p', { class: 'hint consent' }, text.consent(session.productName)) : null,
    session.cardAttemptsLeft < CARD_ATTEMPTS ? el('p', { class: 'hint' }, text.cardAttempts(session.cardAttemptsLeft)) : null,
    el('button', { type: 'submit', class: 'primary', disabled: page.busy || session.cardAttemptsLeft === 0 }, text.continue),
  );
}

function resendButton(session) {
  const text = t();
  const availableAt = session.resendAvailableAt ? Date.parse(session.resendAvailableAt) : null;
  const button = el('button', { type: 'button', class: 'link', onclick: onResend }, text.resend);
  const tick = () => {
    const seconds = availableAt === null ? null : Math.ceil((availableAt - Date.now()) / 1000);
    if (availableAt === null) {
      button.disabled = true;
    } else if (seconds > 0) {
      button.disabled = true;
      button.textContent = text.resendIn(seconds);
    } else {
      button.disabled = page.busy;
      button.textContent = text.resend;
      clearInterval(timers.resend);
    }
  };
  clearInterval(timers.resend);
  timers.resend = setInterval(tick, 1000);
  tick();
  return button;
}

function codeForm(session) {
  const text = t();
  return el(
    'form',
    { novalidate: true, onsubmit: onCode },
    el('p', { class: 'lead' }, text.codeSent(cardName(session.maskedPan))),
    field({
      id: 'code',
      label: text.code,
      error: page.errors.code && errorText(page.errors.code),
      autocomplete: 'one-time-code',
      inputmode: 'numeric',
      maxlength: 8,
      value: page.form.code,
      oninput: (event) => (page.form.code = event.target.value),
    }),
    session.codeAttemptsLeft < CODE_ATTEMPTS ? el('p', { class: 'hint' }, text.codeAttempts(session.codeAttemptsLeft)) : null,
    el(
      'button',
      { type: 'submit', class: 'primary', disabled: page.busy || session.codeAttemptsLeft === 0 },
      isOrder() ? text.payButton(amount()) : text.confirm,
    ),
    resendButton(session),
  );
}

/** A screen the buyer cannot act on here; a final one offers the way back to the shop, so that no outcome is a dead end. */
function outcome(final, ...lines) {
  const back = final && SHOP_URL ? el('a', { class: 'button', href: SHOP_URL }, t().backToShop) : null;
  return el('div', { class: 'outcome' }, ...lines, back);
}

/** The card as a buyer knows it: its network and last four digits. */
function cardName(maskedPan) {
  return `${NETWORK_NAMES[networkOf(maskedPan)] ?? ''} •••• ${maskedPan.slice(-4)}`.trim();
}

/** The printable receipt is on this page's own site: linked by its path, so that it opens on the host the buyer is on. */
const pathOf = (url) => new URL(url, location.href).pathname;

/** A fiscal receipt's lines (title, count × price, discount, VAT rate, line total), its shipping, its total and VAT. */
function fiscalLines(fiscal) {
  const text = t().receipt;
  const money = (tiyin) => formatAmount(tiyin, page.language);
  const line = (title, total, detail) =>
    el('li', { class: 'line' }, el('span', { class: 'line-title' }, title), el('span', { class: 'line-total' }, money(total)), el('span', { class: 'line-detail' }, detail));
  const shipping = fiscal.shipping && { ...fiscal.shipping, count: 1, discount: 0 };
  return [
    el(
      'ul',
      { class: 'lines', 'aria-label': text.lines },
      ...fiscal.items.map((item) => line(item.title, item.total, describeLine(item, page.language))),
      shipping ? line(shipping.title, shipping.price, describeLine(shipping, page.language)) : null,
    ),
    el('dl', { class: 'totals' }, el('dt', {}, text.total), el('dd', {}, money(fiscal.amount)), el('dt', {}, text.vat), el('dd', {}, money(fiscal.vatAmount))),
  ];
}

/** Where the receipt's registration stands: being registered, registered (its QR code and numbers), or refused. */
function fiscalStatus(fiscal) {
  const text = t().receipt;
  if (fiscal.status === 'FAILED') return el('p', { class: 'fiscal-note failed', role: 'status' }, text.failed);
  const open = el('a', { class: 'button secondary', id: 'receipt-open', href: pathOf(fiscal.url) }, text.open);
  if (fiscal.status === 'PENDING') return el('div', { class: 'fiscal' }, el('p', { class: 'fiscal-note pending', role: 'status' }, text.pending), open);
  const qr = el('img', { class: 'qr', src: `${pathOf(fiscal.url)}/qr.svg`, alt: text.qr, width: QR_SIZE_PX, height: QR_SIZE_PX });
  // A phone cannot scan its own screen: the link opens the same check.
  const check = el('a', { id: 'receipt-check', href: fiscal.qrUrl, target: '_blank', rel: 'noopener noreferrer' }, text.check);
  const numbers = el('dl', {}, el('dt', {}, text.number), el('dd', {}, fiscal.receiptNumber), el('dt', {}, text.sign), el('dd', {}, fiscal.fiscalSign));
  return el('div', { class: 'fiscal' }, el('div', { class: 'registered' }, qr, el('div', {}, numbers, el('p', { class: 'hint' }, text.scan), check)), open);
}

/** What a paid order's buyer may keep or quote to the shop: who was paid, how much, with which card, when, its reference, and its fiscal receipt. */
function receipt(session) {
  const text = t();
  const fiscal = session.receipt;
  const rows = [
    [text.receipt.merchant, session.productName],
    // A fiscal receipt's total says it.
    [text.receipt.amount, fiscal ? null : amount()],
    [text.receipt.card, session.maskedPan && cardName(session.maskedPan)],
    [text.receipt.date, session.order.paidAt && formatDateTime(new Date(session.order.paidAt), page.language)],
  ].filter(([, value]) => value);
  const reference = session.order.payment;
  if (fiscal?.status === 'PENDING') poll('receipt');
  return el(
    'section',
    { class: 'receipt', 'aria-labelledby': 'receipt-title' },
    el('h2', { id: 'receipt-title' }, text.receipt.title),
    ...(fiscal ? fiscalLines(fiscal) : []),
    el(
      'dl',
      {},
      ...rows.flatMap(([name, value]) => [el('dt', {}, name), el('dd', {}, value)]),
      // The reference is long and copied as it is: on a line of its own, never broken inside a phone's width.
      ...(reference ? [el('dt', { class: 'wide' }, text.receipt.reference), el('dd', { class: 'wide reference' }, reference)] : []),
    ),
    fiscal ? fiscalStatus(fiscal) : null,
  );
}

function completed(session) {
  const text = t();
  // Once: the page is drawn again as its receipt is registered or the buyer switches language.
  if (session.returnUrl && timers.leave === null) timers.leave = setTimeout(() => location.assign(session.returnUrl), RETURN_DELAY_MS);
  const lines = isOrder()
    ? [receipt(session), page.form.saveCard && session.canSaveCard ? el('p', {}, text.cardSaved(cardName(session.maskedPan))) : null]
    : [el('p', {}, text.doneText(cardName(session.maskedPan)))];
  return outcome(true, ...lines, el('p', { class: 'hint' }, session.returnUrl ? text.returning : text.closeHint));
}

/** Asks again while the bank confirms (`reason` 'processing') or the receipt is registered ('receipt'), a bounded number of times. */
function poll(reason) {
  clearTimeout(timers.poll);
  if (page.polls[reason] >= POLLS_MAX[reason]) return;
  timers.poll = setTimeout(async () => {
    page.polls[reason] += 1;
    // The page is a live region: drawn again unchanged, a screen reader would read it all out every few seconds.
    if ((await refresh(true)) === 'unchanged') poll(reason);
  }, POLL_INTERVAL_MS);
}

/** The body of each screen; the rest are outcomes, told in the screen's own words. */
const BODIES = {
  loading: () => el('p', { class: 'loading', 'aria-busy': 'true' }, '…'),
  paid: completed,
  done: completed,
  code: codeForm,
  pay: cardForm,
  bind: cardForm,
};

/** What the buyer sees now: the heading, a symbol for an outcome (or null), and the body below the summary. */
function screen() {
  const text = t();
  const { name, symbol, final, summary, reason } = screenOf(page.session, page.gone);
  const title = text[`${name}Title`] ?? '';
  if (BODIES[name]) return { title, symbol, summary, body: BODIES[name](page.session) };
  if (name === 'processing') poll('processing');
  const why = reason && text.reasons[reason];
  return { title, symbol, summary, body: outcome(final, why ? el('p', {}, why) : null, el('p', {}, text[`${name}Text`])) };
}

/** What is being paid, and the time left to pay it: shown above every step of an order. */
function orderSummary(session) {
  const text = t();
  const open = isOpen(session) && !page.gone;
  const left = el('p', { class: 'time-left', role: 'timer' });
  const tick = () => {
    const seconds = Math.max(0, Math.floor((Date.parse(session.expiresAt) - Date.now()) / 1000));
    left.textContent = text.timeLeft(clock(seconds));
    // Past its time the session answers 410: ask, and show what it says.
    if (seconds === 0) {
      clearInterval(timers.clock);
      void refresh();
    }
  };
  clearInterval(timers.clock);
  if (open) {
    timers.clock = setInterval(tick, 1000);
    tick();
  }
  return el(
    'div',
    { class: 'summary' },
    el('p', { class: 'amount-label' }, text.amountLabel),
    el('p', { class: 'amount', id: 'amount' }, amount()),
    session.order.description ? el('p', { class: 'description' }, session.order.description) : null,
    open ? left : null,
  );
}

function render() {
  const text = t();
  const session = page.session;
  document.documentElement.lang = page.language;
  const { title, symbol, summary, body } = screen();
  document.title = title ? `${title} · Tolov` : 'Tolov';
  languageSwitcher(document.getElementById('languages'), page.language, setLanguage);
  document.getElementById('title').textContent = title;
  const mark = document.getElementById('symbol');
  mark.hidden = symbol === null;
  mark.className = `symbol ${symbol ?? ''}`;
  document.getElementById('merchant').textContent = session ? text.forMerchant(session.productName) : '';
  document.getElementById('test-mode').hidden = !session || session.livemode;
  document.getElementById('test-mode').textContent = text.testMode;
  document.getElementById('secure').textContent = text.secure;
  const notice = page.notice
    ? el('p', { class: `notice ${page.notice.kind}`, role: page.notice.kind === 'error' ? 'alert' : 'status' }, page.notice.text ?? errorText(page.notice.code))
    : null;
  // A paid order's receipt says what was paid; every other step shows it above, an expired link's too.
  const what = summary && session && isOrder() ? orderSummary(session) : null;
  const focused = caretOf(document.activeElement);
  view.replaceChildren(...[what, notice, body].filter(Boolean));
  // Keep the buyer where they were typing; otherwise put them on the first field with an error, or the first field.
  const errorField = Object.keys(page.errors)[0];
  const target =
    (errorField && document.getElementById(errorField)) || (focused && document.getElementById(focused.id)) || view.querySelector('input');
  target?.focus();
  if (focused?.start != null && target?.id === focused.id) target.setSelectionRange(focused.start, focused.end);
}

/** Which field has the focus, and where its caret is: a field drawn again with the same text gets both back. */
function caretOf(element) {
  if (!element?.id) return null;
  return { id: element.id, start: element.selectionStart ?? null, end: element.selectionEnd ?? null };
}

render();
void refresh();
