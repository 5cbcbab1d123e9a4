// The payout account of the selected mode: where Tolov sends the merchant's money. Everyone on the team sees it, masked;
// only an owner sets or changes it, from a session that proved the second factor at log-in and with a fresh code of
// the authenticator, since a stolen session or API key alone must not be able to redirect money. A change of an
// account already set holds payouts for a day; the layout says so on every page of the mode (`dash.payoutHold`).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { valueOf } from '../../../core/commands.js';
import { ApiError } from '../../../core/errors.js';
import type { Merchant } from '../../../core/merchant.js';
import type { Throttled } from '../../../modules/accounts/service.js';
import { accountKeyValid } from '../../../modules/payouts/account-number.js';
import type { PayoutAccount, PayoutAccountInput } from '../../../modules/payouts/schema.js';
import { ACCOUNT_CHANGE_HOLD_SECONDS, type PayoutsService } from '../../../modules/payouts/service.js';
import { actorOf, dashOf, field, formKeyOf, invocationOf, MANAGES_PAYOUTS, merchantOfSigned, requireRole, ROUTE, sessionOf, signedIn, throttled, type Dash, type PayoutHold, type Signed } from '../context.js';
import { html, type Html } from '../../html.js';
import { csrfField, formKeyField, notice, page, sendPage, timeElement, when } from '../layout.js';
import type { DashboardDeps, Form } from '../deps.js';
import { digitsOf, DIGITS, formField, lineOf, type FieldSpec } from './form-fields.js';

const PATH = '/dashboard/payout-account';
export const HOLDER_NAME_MAX = 200;

type FieldName = keyof PayoutAccountInput | 'code';
type FieldErrors = Partial<Record<FieldName, string>>;
/** The fields shown again after a refusal, as typed: never the account number, which no page shows once typed. */
type Typed = Pick<PayoutAccountInput, 'bankMfo' | 'tin' | 'holderName'>;

interface Said {
  error?: string;
  done?: string;
  errors?: FieldErrors;
  typed?: Typed;
}

/** The mode's payout account, masked; null until one is set. */
export async function payoutAccountOf(payouts: PayoutsService, merchant: Merchant): Promise<PayoutAccount | null> {
  try {
    return await payouts.account(merchant);
  } catch (error) {
    if (error instanceof ApiError && error.statusCode === 404) return null;
    throw error;
  }
}

/** An account as every page names it, the number masked to its last four digits, kept on one line: 00440 •••• 2001. */
export const accountShown = (account: { bankMfo: string; accountLast4: string }) => `${account.bankMfo}\u00a0••••\u00a0${account.accountLast4}`;

/** The hold a change of the signed-in mode's payout account puts on its payouts, while it lasts. */
export async function payoutHoldOf(payouts: PayoutsService, signed: Signed): Promise<PayoutHold | null> {
  const account = await payoutAccountOf(payouts, merchantOfSigned(signed));
  if (account === null || account.payoutsHeldUntil === null) return null;
  const until = new Date(account.payoutsHeldUntil);
  // The change that started the hold, not `updated`: setting the same account again moves `updated`, not the hold.
  return { changed: new Date(until.getTime() - ACCOUNT_CHANGE_HOLD_SECONDS * 1000), until };
}

function facts(dash: Dash, account: PayoutAccount): Html {
  const { t } = dash;
  const held = account.payoutsHeldUntil;
  return html`<dl class="facts">
<dt>${t('bankMfo')}</dt><dd>${account.bankMfo}</dd>
<dt>${t('accountNumber')}</dt><dd class="masked"><span aria-hidden="true">••••</span><span class="visually-hidden">${t('accountEndingIn')}</span> ${account.accountLast4}</dd>
<dt>${t('tin')}</dt><dd>${account.tin}</dd>
<dt>${t('holderName')}</dt><dd>${account.holderName}</dd>
<dt>${t('payoutAccountSetAt')}</dt><dd>${timeElement(account.created)}</dd>
${account.updated === account.created ? '' : html`<dt>${t('payoutAccountChangedAt')}</dt><dd>${timeElement(account.updated)}</dd>`}
<dt>${t('payouts')}</dt><dd>${held === null ? t('payoutsNotHeld') : html`<strong class="held">${t('payoutsHeldUntil', { until: when(held) })}</strong>`}</dd>
</dl>`;
}

type Spec = FieldSpec<FieldName>;

/** The form's fields in their order: the account, then the code that confirms it. */
const FIELDS: Spec[] = [
  { name: 'bankMfo', label: 'bankMfo', hint: 'bankMfoHint', attributes: DIGITS.mfo },
  { name: 'accountNumber', label: 'accountNumber', hint: 'accountNumberHint', attributes: DIGITS.accountNumber },
  { name: 'tin', label: 'tin', hint: 'tinHint', attributes: DIGITS.tin },
  { name: 'holderName', label: 'holderName', hint: 'holderNameHint', attributes: html`maxlength="${HOLDER_NAME_MAX}"` },
  { name: 'code', label: 'payoutCode', hint: 'payoutCodeHint', attributes: DIGITS.code },
];

function accountForm(dash: Dash, account: PayoutAccount | null, said: Said): Html {
  const { t } = dash;
  const { typed } = said;
  // A refused form comes back without the account number (no page shows one once typed): its field says why it is empty.
  const errors: FieldErrors = typed ? { accountNumber: t('accountNumberAgain'), ...said.errors } : {};
  const first = FIELDS.find((spec) => errors[spec.name] !== undefined)?.name;
  const shown = (name: FieldName) => (name === 'bankMfo' || name === 'tin' || name === 'holderName' ? (typed?.[name] ?? '') : '');
  const row = (spec: Spec) => formField(dash, 'payout', spec, { value: shown(spec.name), error: errors[spec.name], focus: spec.name === first });
  // The browser may remember nothing of it: another business's bank account, perhaps on a shared computer.
  return html`<form class="card payout-form" method="post" action="${PATH}" autocomplete="off" data-once aria-labelledby="payout-form-title">${csrfField(dash)}${formKeyField()}
  <h2 id="payout-form-title">${t(account ? 'changePayoutAccount' : 'setPayoutAccount')}</h2>
  ${notice('error', said.error)}
  <p class="hint">${t(account ? 'payoutChangeHolds' : 'payoutFirstSetting')}</p>
  ${FIELDS.slice(0, -1).map(row)}
  <div class="confirm-code">${row(FIELDS.at(-1)!)}</div>
  <button type="submit" class="primary">${t('savePayoutAccount')}</button>
</form>`;
}

/** Whether the session may name where money goes now: an owner's, which proved the second factor at log-in. */
export const mayNameAccounts = ({ session }: Signed) => MANAGES_PAYOUTS.includes(session.role) && session.totp_enabled && session.second_factor;

/** Others are told who may change it; an owner without the second factor proved, how to get there. */
function whyNoForm(dash: Dash, signed: Signed): Html {
  const { t } = dash;
  const { session } = signed;
  if (!MANAGES_PAYOUTS.includes(session.role)) return html`<p class="hint">${t('payoutOwnersOnly')}</p>`;
  return html`<section class="card" aria-labelledby="payout-factor-title"><h2 id="payout-factor-title">${t('payoutNeedsSecondFactorTitle')}</h2>
  <p>${t(session.totp_enabled ? 'payoutNeedsProof' : 'payoutNeedsSecondFactor')}</p>
  <p><a href="/dashboard/account">${t('accountSecurity')}</a></p></section>`;
}

function payoutPage(dash: Dash, signed: Signed, account: PayoutAccount | null, said: Said): Html {
  const { t } = dash;
  const form = mayNameAccounts(signed);
  // A refusal is said in the form, where what to fix is; without a form, above everything.
  const body = html`${form ? '' : notice('error', said.error)}${notice('ok', said.done)}
<p>${t('payoutAccountIntro')} <a href="/dashboard/payouts">${t('seePayouts')}</a></p>
<h2>${t(signed.session.livemode ? 'payoutAccountCurrentLive' : 'payoutAccountCurrentTest')}</h2>
${account ? facts(dash, account) : html`<p class="notice warning">${t('payoutAccountNone')}</p>`}
${form ? accountForm(dash, account, said) : whyNoForm(dash, signed)}`;
  return page(dash, { title: t('navPayoutAccount'), path: PATH, section: 'payoutAccount', body });
}

/** What is wrong with each field of an account, in the page's words: the check digit too, so that a typo costs no code. */
export function accountErrors(dash: Dash, account: PayoutAccountInput): Partial<Record<keyof PayoutAccountInput, string>> {
  const errors: Partial<Record<keyof PayoutAccountInput, string>> = {};
  if (!/^\d{5}$/.test(account.bankMfo)) errors.bankMfo = dash.t('bankMfoInvalid');
  if (!/^\d{20}$/.test(account.accountNumber)) errors.accountNumber = dash.t('accountNumberInvalid');
  else if (errors.bankMfo === undefined && !accountKeyValid(account.bankMfo, account.accountNumber)) errors.accountNumber = dash.t('accountNumberCheckDigit', { mfo: account.bankMfo });
  if (!/^\d{9}$/.test(account.tin)) errors.tin = dash.t('tinInvalid');
  if (account.holderName === '' || account.holderName.length > HOLDER_NAME_MAX || /\p{Cc}/u.test(account.holderName)) errors.holderName = dash.t('holderNameInvalid', { max: HOLDER_NAME_MAX });
  return errors;
}

/**
 * The form's account and its code; or what is wrong with each field. Checked whole before the code is spent, the
 * check digit too: a typo costs no code.
 */
function inputOf(dash: Dash, form: Form | undefined): { input: PayoutAccountInput; code: string } | { errors: FieldErrors } {
  const input = { bankMfo: digitsOf(form, 'bankMfo'), accountNumber: digitsOf(form, 'accountNumber'), tin: digitsOf(form, 'tin'), holderName: lineOf(form, 'holderName') };
  const code = digitsOf(form, 'code');
  const errors: FieldErrors = accountErrors(dash, input);
  if (!/^\d{6}$/.test(code)) errors.code = dash.t('payoutCodeFormat');
  return Object.keys(errors).length === 0 ? { input, code } : { errors };
}

type CodeRefusal = { ok: false; reason: 'second_factor_required' | 'wrong_code' } | Throttled;

export function payoutAccountPages(app: FastifyInstance, { payouts, accounts }: DashboardDeps): void {
  const show = async (request: FastifyRequest, said: Said = {}) => {
    const signed = signedIn(request);
    return payoutPage(dashOf(request), signed, await payoutAccountOf(payouts, merchantOfSigned(signed)), said);
  };

  /** Why the code did not confirm the change, on the page: nothing was saved. */
  const refuse = async (request: FastifyRequest, reply: FastifyReply, refusal: CodeRefusal, input: PayoutAccountInput, typed: Typed) => {
    const dash = dashOf(request);
    if (refusal.reason === 'throttled') {
      const { status, error } = throttled(reply, dash, refusal.retryAfterSeconds);
      return sendPage(reply, await show(request, { error, typed }), status);
    }
    if (refusal.reason === 'second_factor_required') return sendPage(reply, await show(request, { error: dash.t('payoutSecondFactorRefused') }), 403);
    // A wrong code from an owner's session may be someone at their browser trying to redirect the money: owners see it.
    await accounts.audit(actorOf(signedIn(request)), 'payout_account.update_refused', `${input.bankMfo} ••••${input.accountNumber.slice(-4)}`);
    return sendPage(reply, await show(request, { error: dash.t('payoutCodeWrong'), errors: { code: dash.t('payoutCodeWrongField') }, typed }), 401);
  };

  app.get<{ Querystring: { done?: string } }>('/payout-account', ROUTE, async (request, reply) => {
    const done = request.query.done === 'saved' ? dashOf(request).t('payoutAccountSaved') : undefined;
    return sendPage(reply, await show(request, { done }));
  });

  app.post<{ Body: Form }>('/payout-account', ROUTE, async (request, reply) => {
    const signed = signedIn(request);
    requireRole(signed, MANAGES_PAYOUTS);
    const dash = dashOf(request);
    const typed = { bankMfo: field(request.body, 'bankMfo'), tin: field(request.body, 'tin'), holderName: field(request.body, 'holderName') };
    const read = inputOf(dash, request.body);
    if ('errors' in read) return sendPage(reply, await show(request, { error: dash.t('payoutFieldsInvalid'), errors: read.errors, typed }), 400);
    // The form's key is read before the code is spent: a malformed one is refused with the code still unused.
    const invocation = invocationOf(request, signed, read.input, formKeyOf(request.body));
    const proved = await accounts.confirmSecondFactor(sessionOf(signed), read.code);
    if (!proved.ok) return refuse(request, reply, proved, read.input, typed);
    valueOf(await payouts.setAccount(invocation, read.input));
    return reply.redirect(`${PATH}?done=saved`, 303);
  });
}
