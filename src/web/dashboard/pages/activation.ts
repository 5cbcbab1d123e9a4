// Going live: the request that asks Tolov to open live mode — who the business is, and the bank account its live payouts
// go to — and Tolov's answer. Everyone on the team sees where it stands; only an owner sends it, with a fresh code of
// the authenticator as on the payout account's page, since it names where live money goes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { valueOf } from '../../../core/commands.js';
import type { Throttled } from '../../../modules/accounts/service.js';
import { BUSINESS_CATEGORIES, type Activation, type ActivationInput, type BusinessCategory } from '../../../modules/activations/schema.js';
import { actorOf, dashOf, field, formKeyOf, invocationOf, MANAGES_PAYOUTS, requireRole, ROUTE, SEES_SECRETS, sessionOf, signedIn, throttled, type Dash, type Signed } from '../context.js';
import { html, type Html } from '../../html.js';
import type { DashboardDeps, Form } from '../deps.js';
import { csrfField, formKeyField, notice, page, sendPage, timeElement, when } from '../layout.js';
import { digitsOf, DIGITS, formField, lineOf, type FieldSpec } from './form-fields.js';
import { accountErrors, accountShown, HOLDER_NAME_MAX, mayNameAccounts } from './payout-account.js';

const PATH = '/dashboard/activation';
/** The holder's limit: a legal name is the holder's name when that is left empty. */
const LEGAL_NAME_MAX = HOLDER_NAME_MAX;
const LEGAL_ADDRESS_MAX = 500;
const WEBSITE_MAX = 2048;

type FieldName = keyof ActivationInput | 'code';
type FieldErrors = Partial<Record<FieldName, string>>;
/** The fields a form shows: all but the account number, which no page shows once typed, and the code. */
type Shown = Record<Exclude<FieldName, 'accountNumber' | 'code'>, string>;

interface Said {
  error?: string;
  done?: string;
  errors?: FieldErrors;
  /** What was typed into a refused form. */
  typed?: Shown;
}

/**
 * Where the product stands: the request's status, or `live` when Tolov opened live mode without approving a request
 * (the operator API's `/live`), which leaves nothing to request.
 */
type Standing = 'not_submitted' | 'submitted' | 'approved' | 'rejected' | 'live';

function standingOf(activation: Activation | null, liveEnabled: boolean): Standing {
  if (activation?.status === 'approved') return 'approved';
  if (liveEnabled) return 'live';
  return activation?.status ?? 'not_submitted';
}

const submittable = (standing: Standing) => standing === 'not_submitted' || standing === 'rejected';

const isCategory = (value: string): value is BusinessCategory => (BUSINESS_CATEGORIES as readonly string[]).includes(value);
const categoryLabel = (dash: Dash, value: string) => (isCategory(value) ? dash.t(`category_${value}`) : value);

type Spec = FieldSpec<FieldName>;
const WIDE = html`class="wide"`;

/** The business, then where its live payouts go (the holder's fields may be left empty: the business's are used). */
const BUSINESS_FIELDS: Spec[] = [
  { name: 'legalName', label: 'legalName', hint: 'legalNameHint', attributes: html`${WIDE} maxlength="${LEGAL_NAME_MAX}"` },
  { name: 'tin', label: 'businessTin', hint: 'businessTinHint', attributes: DIGITS.tin },
  { name: 'legalAddress', label: 'legalAddress', hint: 'legalAddressHint', attributes: html`${WIDE} rows="2" maxlength="${LEGAL_ADDRESS_MAX}"`, control: { kind: 'textarea' } },
  { name: 'website', label: 'website', hint: 'websiteHint', attributes: html`${WIDE} inputmode="url" autocapitalize="none" spellcheck="false" maxlength="${WEBSITE_MAX}"` },
  {
    name: 'category',
    label: 'businessCategory',
    hint: 'businessCategoryHint',
    attributes: html``,
    control: { kind: 'select', prompt: 'categoryChoose', choices: BUSINESS_CATEGORIES.map((value) => ({ value, label: `category_${value}` as const })) },
  },
];
const ACCOUNT_FIELDS: Spec[] = [
  { name: 'bankMfo', label: 'bankMfo', hint: 'bankMfoHint', attributes: DIGITS.mfo },
  { name: 'accountNumber', label: 'accountNumber', hint: 'accountNumberHint', attributes: DIGITS.accountNumber },
  { name: 'holderTin', label: 'holderTin', hint: 'holderTinHint', attributes: DIGITS.tin, optional: true },
  { name: 'holderName', label: 'holderName', hint: 'holderNameOptionalHint', attributes: html`${WIDE} maxlength="${HOLDER_NAME_MAX}"`, optional: true },
];
const CODE_FIELD: Spec = { name: 'code', label: 'payoutCode', hint: 'activationCodeHint', attributes: DIGITS.code };
const ALL_FIELDS = [...BUSINESS_FIELDS, ...ACCOUNT_FIELDS, CODE_FIELD];

const EMPTY: Shown = { legalName: '', tin: '', legalAddress: '', website: '', category: '', bankMfo: '', holderTin: '', holderName: '' };

/** What a rejected request said, to correct: the account number excepted. */
const shownOf = (activation: Activation): Shown => ({
  legalName: activation.legalName,
  tin: activation.tin,
  legalAddress: activation.legalAddress,
  website: activation.website,
  category: activation.category,
  bankMfo: activation.payoutAccount.bankMfo,
  holderTin: activation.payoutAccount.tin,
  holderName: activation.payoutAccount.holderName,
});

/** The status, with the operator's reason for a rejection, said to whoever reads it. */
function statusCard(dash: Dash, activation: Activation | null, standing: Standing, form: boolean): Html {
  const { t } = dash;
  const paragraphs: Record<Standing, () => Html> = {
    not_submitted: () => html`<p>${t('activationNotSubmittedText')}</p>`,
    submitted: () => html`<p>${t('activationSubmittedText', { since: when(activation!.submitted) })}</p>`,
    approved: () => html`<p>${t('activationApprovedText', { when: when(activation!.decided) })}</p>`,
    rejected: () => html`<p>${t('activationRejectedText', { when: when(activation!.decided) })}</p>
  <blockquote class="reason">${activation!.rejectionReason}</blockquote>
  <p>${t(form ? 'activationRejectedOwner' : 'activationRejectedOthers')}</p>`,
    live: () => html`<p>${t('activationLiveText')}</p>`,
  };
  return html`<section class="card activation-status s-${standing}" aria-labelledby="activation-status-title">
  <h2 id="activation-status-title">${t('activationStatus')}: <span class="status s-${standing}">${t(`activation_${standing}`)}</span></h2>
  ${paragraphs[standing]()}
</section>`;
}

/** Once approved: the mode to switch to, the live key and endpoint to make, and where live payouts go. */
function nextSteps(dash: Dash, signed: Signed, activation: Activation): Html {
  const { t } = dash;
  const live = signed.session.livemode;
  const switchStep = live
    ? html`<li>${t('activationStepSwitched')}</li>`
    : html`<li><p>${t('activationStepSwitch')}</p><form method="post" action="/dashboard/mode">${csrfField(dash)}<input type="hidden" name="mode" value="live"><button type="submit" class="primary">${t('switchToLive')}</button></form></li>`;
  const keyStep = SEES_SECRETS.includes(signed.session.role)
    ? html`<li>${t('activationStepKey')} <a href="/dashboard/api-keys">${t('navApiKeys')}</a> · <a href="/dashboard/webhooks">${t('navWebhooks')}</a></li>`
    : '';
  return html`<h2>${t('activationNextSteps')}</h2>
<ol class="next-steps">${switchStep}${keyStep}
  <li>${t('activationStepPayouts', { account: accountShown(activation.payoutAccount) })} <a href="/dashboard/payout-account">${t('seePayoutAccount')}</a></li>
</ol>`;
}

/** The request as it was sent, the account number masked. */
function sentFacts(dash: Dash, activation: Activation): Html {
  const { t } = dash;
  const account = activation.payoutAccount;
  return html`<h2>${t('activationSentTitle')}</h2>
<dl class="facts">
<dt>${t('legalName')}</dt><dd>${activation.legalName}</dd>
<dt>${t('businessTin')}</dt><dd>${activation.tin}</dd>
<dt>${t('legalAddress')}</dt><dd>${activation.legalAddress}</dd>
<dt>${t('website')}</dt><dd><a href="${activation.website}" rel="noopener noreferrer">${activation.website}</a></dd>
<dt>${t('businessCategory')}</dt><dd>${categoryLabel(dash, activation.category)}</dd>
<dt>${t('activationPayoutAccount')}</dt><dd class="masked">${accountShown(account)}</dd>
<dt>${t('holderTin')}</dt><dd>${account.tin}</dd>
<dt>${t('holderName')}</dt><dd>${account.holderName}</dd>
<dt>${t('activationSentAt')}</dt><dd>${timeElement(activation.submitted)}</dd>
${activation.decided === null ? '' : html`<dt>${t('activationDecidedAt')}</dt><dd>${timeElement(activation.decided)}</dd>`}
</dl>`;
}

/**
 * The owner's form: empty, or a rejected request's fields to correct, or a refused form's as typed. The account number
 * is always typed again: its field says so (and, after a rejection, which account was sent).
 */
function activationForm(dash: Dash, activation: Activation | null, said: Said): Html {
  const { t } = dash;
  const { typed } = said;
  const rejected = activation?.status === 'rejected' ? activation : null;
  const values = typed ?? (rejected ? shownOf(rejected) : EMPTY);
  const errors: FieldErrors = typed ? { accountNumber: t('accountNumberAgain'), ...said.errors } : {};
  const first = ALL_FIELDS.find((spec) => errors[spec.name] !== undefined)?.name;
  const sentEnding = rejected && !typed ? t('accountNumberSentEnding', { last4: rejected.payoutAccount.accountLast4 }) : undefined;
  const row = (spec: Spec) =>
    formField(dash, 'activation', spec, {
      value: spec.name === 'accountNumber' || spec.name === 'code' ? '' : values[spec.name],
      error: errors[spec.name],
      focus: spec.name === first,
      ...(spec.name === 'accountNumber' && sentEnding ? { hint: sentEnding } : {}),
    });
  // The browser may remember nothing of it: a business's bank account, perhaps on a shared computer.
  return html`<form class="card payout-form activation-form" method="post" action="${PATH}" autocomplete="off" data-once aria-labelledby="activation-form-title">${csrfField(dash)}${formKeyField()}
  <h2 id="activation-form-title">${t(rejected ? 'activationFormTitleAgain' : 'activationFormTitle')}</h2>
  ${notice('error', said.error)}
  <p class="hint">${t('activationFormIntro')}</p>
  <h3>${t('activationBusiness')}</h3>
  ${BUSINESS_FIELDS.map(row)}
  <h3>${t('activationPayoutAccount')}</h3>
  <p class="hint">${t('activationPayoutAccountHint')}</p>
  ${ACCOUNT_FIELDS.map(row)}
  <div class="confirm-code">${row(CODE_FIELD)}</div>
  <button type="submit" class="primary">${t('submitActivation')}</button>
</form>`;
}

/** Others are told who sends it; an owner without the second factor proved, how to get there. */
function whyNoForm(dash: Dash, signed: Signed): Html {
  const { t } = dash;
  const { session } = signed;
  if (!MANAGES_PAYOUTS.includes(session.role)) return html`<p class="hint">${t('activationOwnersOnly')}</p>`;
  return html`<section class="card" aria-labelledby="activation-factor-title"><h2 id="activation-factor-title">${t('payoutNeedsSecondFactorTitle')}</h2>
  <p>${t(session.totp_enabled ? 'payoutNeedsProof' : 'activationNeedsSecondFactor')}</p>
  <p><a href="/dashboard/account">${t('accountSecurity')}</a></p></section>`;
}

function activationPage(dash: Dash, signed: Signed, activation: Activation | null, said: Said): Html {
  const { t } = dash;
  const standing = standingOf(activation, signed.product.live_enabled);
  const form = submittable(standing) && mayNameAccounts(signed);
  const decided = standing === 'approved' || standing === 'live';
  // A refusal is said in the form, where what to fix is; without a form, above everything. "Sent" is said while the
  // request is under review: the address that says it may be opened again after Tolov's answer.
  const body = html`${form ? '' : notice('error', said.error)}${standing === 'submitted' ? notice('ok', said.done) : ''}
${decided ? '' : html`<p class="lead">${t('activationIntro')}</p>`}
${statusCard(dash, activation, standing, form)}
${standing === 'approved' ? nextSteps(dash, signed, activation!) : ''}
${activation !== null && !form ? sentFacts(dash, activation) : ''}
${form ? activationForm(dash, activation, said) : submittable(standing) ? whyNoForm(dash, signed) : ''}`;
  return page(dash, { title: t('activationTitle'), path: PATH, section: 'activation', body });
}

/**
 * The shop's link as the API takes it, `https://` put in front when left out (t.me/chorsumarket); null when it is no
 * web address with a dotted host.
 */
function websiteOf(typed: string): string | null {
  const link = /^[a-z][a-z0-9+.-]*:/i.test(typed) ? typed : `https://${typed}`;
  if (link.length > WEBSITE_MAX || !/^https?:\/\/[^\s/?#]+([/?#]\S*)?$/i.test(link)) return null;
  try {
    return new URL(link).hostname.includes('.') ? link : null;
  } catch {
    return null;
  }
}

const textValid = (text: string, max: number) => text !== '' && text.length <= max && !/\p{Cc}/u.test(text);

/** What is wrong with the business's fields, in the page's words. */
function businessErrors(dash: Dash, typed: Shown, website: string | null): FieldErrors {
  const { t } = dash;
  const errors: FieldErrors = {};
  if (!textValid(typed.legalName, LEGAL_NAME_MAX)) errors.legalName = t('legalNameInvalid', { max: LEGAL_NAME_MAX });
  if (!/^\d{9}$/.test(typed.tin)) errors.tin = t('tinInvalid');
  if (!textValid(typed.legalAddress, LEGAL_ADDRESS_MAX)) errors.legalAddress = t('legalAddressInvalid', { max: LEGAL_ADDRESS_MAX });
  if (website === null) errors.website = t('websiteInvalid');
  if (!isCategory(typed.category)) errors.category = t('categoryInvalid');
  return errors;
}

const typedOf = (form: Form | undefined): Shown => ({
  legalName: lineOf(form, 'legalName'),
  tin: digitsOf(form, 'tin'),
  legalAddress: lineOf(form, 'legalAddress'),
  website: field(form, 'website'),
  category: field(form, 'category'),
  bankMfo: digitsOf(form, 'bankMfo'),
  holderTin: digitsOf(form, 'holderTin'),
  holderName: lineOf(form, 'holderName'),
});

/**
 * The request and its code; or what is wrong with each field, checked whole before the code is spent (the account's
 * check digit too). Holder fields left empty take the business's: the account is most often its own.
 */
function inputOf(dash: Dash, form: Form | undefined, typed: Shown): { input: ActivationInput; code: string } | { errors: FieldErrors } {
  const website = websiteOf(typed.website);
  const account = { bankMfo: typed.bankMfo, accountNumber: digitsOf(form, 'accountNumber'), tin: typed.holderTin || typed.tin, holderName: typed.holderName || typed.legalName };
  const wrong = accountErrors(dash, account);
  const errors = businessErrors(dash, typed, website);
  const put = (name: FieldName, error: string | undefined) => {
    if (error !== undefined) errors[name] = error;
  };
  put('bankMfo', wrong.bankMfo);
  put('accountNumber', wrong.accountNumber);
  // A holder's field left empty is the business's, whose own field says what is wrong with it.
  if (typed.holderTin !== '') put('holderTin', wrong.tin);
  if (typed.holderName !== '') put('holderName', wrong.holderName);
  const code = digitsOf(form, 'code');
  if (!/^\d{6}$/.test(code)) errors.code = dash.t('payoutCodeFormat');
  if (Object.keys(errors).length > 0 || website === null || !isCategory(typed.category)) return { errors };
  const { bankMfo, accountNumber, tin: holderTin, holderName } = account;
  return { input: { legalName: typed.legalName, tin: typed.tin, legalAddress: typed.legalAddress, website, category: typed.category, bankMfo, accountNumber, holderTin, holderName }, code };
}

type CodeRefusal = { ok: false; reason: 'second_factor_required' | 'wrong_code' } | Throttled;

export function activationPages(app: FastifyInstance, { activations, accounts }: DashboardDeps): void {
  const show = async (request: FastifyRequest, said: Said = {}) => {
    const signed = signedIn(request);
    return activationPage(dashOf(request), signed, await activations.of(signed.product.id), said);
  };
  /** Why nothing was sent although the form was right: the request is under review, or live mode is on. */
  const notSubmittable = async (request: FastifyRequest, reply: FastifyReply) => {
    const signed = signedIn(request);
    const standing = standingOf(await activations.of(signed.product.id), signed.product.live_enabled);
    const error = dashOf(request).t(standing === 'submitted' ? 'activationRefusedUnderReview' : 'activationRefusedLive');
    return sendPage(reply, await show(request, { error }), 409);
  };

  /** Why the code did not confirm the request, on the page: nothing was sent. */
  const refuse = async (request: FastifyRequest, reply: FastifyReply, refusal: CodeRefusal, input: ActivationInput, typed: Shown) => {
    const dash = dashOf(request);
    if (refusal.reason === 'throttled') {
      const { status, error } = throttled(reply, dash, refusal.retryAfterSeconds);
      return sendPage(reply, await show(request, { error, typed }), status);
    }
    if (refusal.reason === 'second_factor_required') return sendPage(reply, await show(request, { error: dash.t('activationSecondFactorRefused') }), 403);
    // A wrong code may be someone at an owner's browser naming their own account for live payouts: owners see it.
    await accounts.audit(actorOf(signedIn(request)), 'activation.submit_refused', `${input.legalName}: ${input.bankMfo} ••••${input.accountNumber.slice(-4)}`);
    return sendPage(reply, await show(request, { error: dash.t('activationCodeWrong'), errors: { code: dash.t('payoutCodeWrongField') }, typed }), 401);
  };

  app.get<{ Querystring: { done?: string } }>('/activation', ROUTE, async (request, reply) => {
    const done = request.query.done === 'submitted' ? dashOf(request).t('activationSubmittedDone') : undefined;
    return sendPage(reply, await show(request, { done }));
  });

  app.post<{ Body: Form }>('/activation', ROUTE, async (request, reply) => {
    const signed = signedIn(request);
    requireRole(signed, MANAGES_PAYOUTS);
    const dash = dashOf(request);
    if (!submittable(standingOf(await activations.of(signed.product.id), signed.product.live_enabled))) return notSubmittable(request, reply);
    if (!mayNameAccounts(signed)) return sendPage(reply, await show(request, { error: dash.t('activationSecondFactorRefused') }), 403);
    const typed = typedOf(request.body);
    const read = inputOf(dash, request.body, typed);
    if ('errors' in read) return sendPage(reply, await show(request, { error: dash.t('activationFieldsInvalid'), errors: read.errors, typed }), 400);
    // The form's key is read before the code is spent: a malformed one is refused with the code still unused.
    const invocation = invocationOf(request, signed, read.input, formKeyOf(request.body));
    const proved = await accounts.confirmSecondFactor(sessionOf(signed), read.code);
    if (!proved.ok) return refuse(request, reply, proved, read.input, typed);
    const answer = await activations.submit(invocation, read.input);
    // Another owner's request, or Tolov's opening of live mode, came first.
    if (!answer.ok && answer.error.code === 'INVALID_STATE') return notSubmittable(request, reply);
    valueOf(answer);
    return reply.redirect(`${PATH}?done=submitted`, 303);
  });
}
