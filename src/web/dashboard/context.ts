// What each dashboard request carries: its language, its signed-in user (if any), the product it shows, and the
// token its forms must send back. Cookies, CSRF and the checks of who may do what live here.
import { timingSafeEqual, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Answer, Invocation } from '../../core/commands.js';
import { ApiError, type ErrorBody } from '../../core/errors.js';
import type { Merchant } from '../../core/merchant.js';
import { PASSWORD_LENGTH_MAX, PASSWORD_LENGTH_MIN } from '../../modules/accounts/passwords.js';
import { EMAIL_PATTERN } from '../../modules/accounts/policies.js';
import type { SignedSession } from '../../modules/accounts/service.js';
import type { Role, SessionRow } from '../../modules/accounts/store.js';
import type { ProductRow } from '../../modules/products/store.js';
import { cookiesOf as parseCookies, languageOf } from '../language.js';
import type { DashboardDeps, Form } from './deps.js';
import { translator, type Lang, type Translate } from './i18n.js';

/** Where a surface of pages lives: the merchants' dashboard, or Tolov's operator console. Its cookies are its own. */
export type Base = '/dashboard' | '/operator';
export const SESSION_COOKIE = 'tolov_session';
const OPERATOR_SESSION_COOKIE = 'tolov_operator';
const FORM_COOKIE = 'tolov_form';
const LANG_COOKIE = 'tolov_lang';
const LANG_COOKIE_MAX_AGE_SECONDS = 365 * 86_400;

/** The session cookie's name on `base`: the dashboard's and the console's never stand for each other. */
export const sessionCookieOf = (base: Base) => (base === '/operator' ? OPERATOR_SESSION_COOKIE : SESSION_COOKIE);

export interface Signed {
  token: string;
  session: SessionRow;
  product: ProductRow;
}

export interface Dash {
  base: Base;
  lang: Lang;
  t: Translate;
  signed: Signed | null;
  /** The token a form must send back as `_csrf`: the session's, or the anonymous form cookie's. */
  csrf: string;
  secure: boolean;
  /** While a change of the payout account holds the mode's payouts: every page of the mode says so. */
  payoutHold: PayoutHold | null;
}

/** When the payout account was changed, and until when that holds payouts. */
export interface PayoutHold {
  changed: Date;
  until: Date;
}

declare module 'fastify' {
  interface FastifyRequest {
    dash: Dash | null;
  }
}

/** A refusal the dashboard shows as a page of its own. */
export class DashboardError extends Error {
  constructor(
    readonly statusCode: 403 | 404 | 400 | 429,
    readonly messageKey: 'notFound' | 'forbidden' | 'badForm' | 'tooManyRequests' | 'unavailable',
  ) {
    super(messageKey);
  }
}

export function cookiesOf(request: FastifyRequest): Map<string, string> {
  return parseCookies(request.headers.cookie);
}

function cookie(name: string, value: string, options: { path: Base; secure: boolean; maxAgeSeconds?: number; httpOnly?: boolean }): string {
  const parts = [`${name}=${value}`, `Path=${options.path}`, 'SameSite=Lax'];
  if (options.httpOnly !== false) parts.push('HttpOnly');
  if (options.secure) parts.push('Secure');
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  return parts.join('; ');
}

export function setSessionCookie(reply: FastifyReply, dash: Dash, token: string, maxAgeSeconds: number): void {
  reply.header('Set-Cookie', cookie(sessionCookieOf(dash.base), token, { path: dash.base, secure: dash.secure, maxAgeSeconds }));
}

export function clearSessionCookie(reply: FastifyReply, dash: Dash): void {
  reply.header('Set-Cookie', cookie(sessionCookieOf(dash.base), '', { path: dash.base, secure: dash.secure, maxAgeSeconds: 0 }));
}

export function setLanguageCookie(reply: FastifyReply, dash: Dash, lang: Lang): void {
  reply.header('Set-Cookie', cookie(LANG_COOKIE, lang, { path: dash.base, secure: dash.secure, maxAgeSeconds: LANG_COOKIE_MAX_AGE_SECONDS }));
}

/**
 * The request's language, and the anonymous form token: taken from its cookie, or made and set (for the forms shown
 * before log-in, whose POSTs must send it back).
 */
export function startDash(request: FastifyRequest, reply: FastifyReply, secure: boolean, base: Base = '/dashboard'): Dash {
  const cookies = cookiesOf(request);
  const lang = languageOf(cookies.get(LANG_COOKIE), request.headers['accept-language']);
  let formToken = cookies.get(FORM_COOKIE);
  if (formToken === undefined || !isToken(formToken)) {
    formToken = randomBytes(32).toString('base64url');
    reply.header('Set-Cookie', cookie(FORM_COOKIE, formToken, { path: base, secure }));
  }
  return { base, lang, t: translator(lang), signed: null, csrf: formToken, secure, payoutHold: null };
}

/** The signed-in user a session token stands for, while its session and its account's product exist. */
export async function signedOf(deps: Pick<DashboardDeps, 'accounts' | 'products'>, token: string): Promise<Signed | undefined> {
  const session = await deps.accounts.session(token);
  const product = session ? await deps.products.ofAccount(session.account_id) : undefined;
  return session && product ? { token, session, product } : undefined;
}

/** Makes the request's pages those of `signed`, whose forms then send its session's token. */
export function signInto(dash: Dash, signed: Signed): void {
  dash.signed = signed;
  dash.csrf = signed.session.csrf_token;
}

export function tokensEqual(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function dashOf(request: FastifyRequest): Dash {
  if (request.dash === null) throw new Error('dashboard request without its context');
  return request.dash;
}

/** No session: a page view goes to the log-in page, anything else is refused. */
export class SignInRequired extends Error {}

/** The signed-in user; without one, SignInRequired. */
export function signedIn(request: FastifyRequest): Signed {
  const signed = dashOf(request).signed;
  if (signed === null) throw new SignInRequired('sign in first');
  return signed;
}

/** Refuses unless the user's role is one of `roles`. */
export function requireRole(signed: Signed, roles: readonly Role[]): void {
  if (!roles.includes(signed.session.role)) throw new DashboardError(403, 'forbidden');
}

export const SEES_SECRETS: readonly Role[] = ['owner', 'developer'];
export const CHANGES: readonly Role[] = ['owner', 'developer'];
export const MANAGES_TEAM: readonly Role[] = ['owner'];
export const MANAGES_BRAND: readonly Role[] = ['owner'];
/** Where the money goes: owners only, and only with the second factor proved at the change. */
export const MANAGES_PAYOUTS: readonly Role[] = ['owner'];

/** The services' view of the dashboard user: the account's product in the selected mode. */
export function merchantOfSigned(signed: Signed): Merchant {
  return {
    actor: { kind: 'user', userId: signed.session.user_id, accountId: signed.session.account_id },
    productId: signed.product.id,
    productName: signed.product.name,
    livemode: signed.session.livemode,
    scopes: signed.product.scopes,
    feeBps: signed.product.fee_bps,
    receiptRequired: signed.product.receipt_required,
    suspended: signed.product.suspended_at !== null,
  };
}

/**
 * A command called from a dashboard form: the signed-in user acting on the account's product in the selected mode,
 * under the form's idempotency key (null: the form has none), recognised again by the form's address and `input`.
 */
export function invocationOf(request: FastifyRequest, signed: Signed, input: unknown, formKey: string | null = null): Invocation {
  const path = request.url.split('?')[0]!;
  return { scope: merchantOfSigned(signed), key: formKey === null ? null : `dashboard-${formKey}`, request: { id: request.id, method: 'POST', path, body: input } };
}

/** Why a command refused a form: its code, the field it names, the bank's failure code. */
export type Refusal = Pick<ErrorBody, 'code' | 'param' | 'failureCode'>;

/**
 * A command's outcome for a form: its value, or its refusal with its status, answered (a refusal stored under the
 * form's key) or thrown (a body the service could not take, such as an amount above a hold, is never stored).
 */
export async function outcomeOf<T>(run: () => Promise<Answer<T>>): Promise<{ value: T } | { refused: Refusal; status: number }> {
  try {
    const answer = await run();
    return answer.ok ? { value: answer.value } : { refused: answer.error, status: answer.status };
  } catch (error) {
    if (!(error instanceof ApiError) || error.statusCode >= 500) throw error;
    return { refused: { code: error.code, ...(error.extra.param === undefined ? {} : { param: error.extra.param }) }, status: error.statusCode };
  }
}

export function actorOf(signed: Signed) {
  return { userId: signed.session.user_id, accountId: signed.session.account_id, livemode: signed.session.livemode };
}

/** Dashboard routes: no API credential (the session is checked here) and no place in the API's description. */
export const ROUTE = { config: { auth: { kind: 'public' } }, schema: { hide: true } } as const;

/** A text field of a posted form, trimmed; '' when absent or given twice. */
export function field(form: Record<string, string | string[]> | undefined, name: string): string {
  const value = form?.[name];
  return typeof value === 'string' ? value.trim() : '';
}

/** Every value of a field that may repeat (checkboxes). */
export function fields(form: Record<string, string | string[]> | undefined, name: string): string[] {
  const value = form?.[name];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}


/** The form's e-mail, lower-cased, or null when it is no address mail can go to. */
export function emailOf(form: Form | undefined): string | null {
  const email = field(form, 'email').toLowerCase();
  return email.length > 254 || !EMAIL_PATTERN.test(email) ? null : email;
}

/** A password field as typed (untrimmed), whatever its length: a wrong one is answered as wrong; '' when absent. */
export function typedPassword(form: Form | undefined, name = 'password'): string {
  const value = form?.[name];
  return typeof value === 'string' ? value : '';
}

/** The form's `name` field as a new password of an allowed length, or null. */
export function passwordOf(form: Form | undefined, name = 'password'): string | null {
  const password = typedPassword(form, name);
  return password.length < PASSWORD_LENGTH_MIN || password.length > PASSWORD_LENGTH_MAX ? null : password;
}

const FORM_KEY = /^[0-9a-f-]{36}$/;

/**
 * The idempotency key a form carries in its hidden field (`formKeyField`), so that the same form posted twice does its
 * work once; null when it carries none. A malformed one is refused.
 */
export function formKeyOf(form: Form | undefined): string | null {
  const key = field(form, 'idempotencyKey');
  if (key === '') return null;
  if (!FORM_KEY.test(key)) throw new ApiError('VALIDATION_ERROR', 'idempotencyKey', { param: 'idempotencyKey' });
  return key;
}

/** The form's idempotency key, for an action only ever made under one (a refund, a payout): refused without it. */
export function requiredFormKeyOf(form: Form | undefined): string {
  const key = formKeyOf(form);
  if (key === null) throw new ApiError('VALIDATION_ERROR', 'idempotencyKey', { param: 'idempotencyKey' });
  return key;
}

/** Tokens of sessions, forms and links: 32 random bytes, base64url. */
export const isToken = (value: string) => /^[A-Za-z0-9_-]{43}$/.test(value);

/** The signed-in session as the accounts service takes it to change the user's own security. */
export function sessionOf(signed: Signed): SignedSession {
  return { token: signed.token, actor: actorOf(signed), secondFactorProved: signed.session.second_factor };
}

/** A throttled attempt's answer: 429, with the wait in `Retry-After` and in the words of the page. */
export function throttled(reply: FastifyReply, dash: Dash, retryAfterSeconds: number): { status: 429; error: string } {
  reply.header('Retry-After', String(retryAfterSeconds));
  return { status: 429, error: tooManyAttempts(dash, retryAfterSeconds) };
}

/** What a throttled attempt is told, the same whichever throttle refused it: the wait, in seconds or minutes. */
function tooManyAttempts(dash: Dash, retryAfterSeconds: number): string {
  return retryAfterSeconds < 120
    ? dash.t('tooManyAttemptsSeconds', { seconds: retryAfterSeconds })
    : dash.t('tooManyAttemptsMinutes', { minutes: Math.ceil(retryAfterSeconds / 60) });
}
