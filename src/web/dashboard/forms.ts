// What every server-rendered surface shares, the dashboard and the operator console alike: forms parsed within their
// limits, every POST checked for its form token (CSRF) and its origin, `?lang=` turned into the language cookie, and
// errors shown as pages.
import multipart from '@fastify/multipart';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, isDatabaseUnavailable } from '../../core/errors.js';
import { LOGO_MAX_BYTES } from '../../modules/products/branding.js';
import { html, type Html } from '../html.js';
import { DashboardError, dashOf, SignInRequired, setLanguageCookie, tokensEqual, type Dash } from './context.js';
import type { Form } from './deps.js';
import { isLang, type MessageKey } from './i18n.js';
import { sendPage } from './layout.js';

const FORM_BODY_MAX_BYTES = 16 * 1024;
const FORM_FIELDS_MAX = 50;

/** URL-encoded forms, as browsers post them: repeated names (checkboxes) become lists. */
export function parseForms(app: FastifyInstance): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_MAX_BYTES }, (_request, text: string, done) => {
    const form: Form = {};
    const params = new URLSearchParams(text);
    let count = 0;
    for (const [name, value] of params) {
      if (++count > FORM_FIELDS_MAX) return done(new DashboardError(400, 'badForm'), undefined);
      const before = form[name];
      form[name] = before === undefined ? value : [...(Array.isArray(before) ? before : [before]), value];
    }
    done(null, form);
  });
}

/**
 * Forms with a file input (the branding's logo), in memory: one file, the fields as text. A file over the logo's
 * limit arrives cut one byte past it, so that the page refuses it in the words it uses for every bad logo.
 */
export async function parseFileForms(app: FastifyInstance): Promise<void> {
  await app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    throwFileSizeLimit: false,
    limits: { fields: FORM_FIELDS_MAX, fieldSize: FORM_BODY_MAX_BYTES, files: 1, fileSize: LOGO_MAX_BYTES + 1, parts: FORM_FIELDS_MAX + 1, headerPairs: 20 },
  });
}

/** Whether a POST comes from this origin, when the browser says (it always does for forms today). */
function sameOrigin(request: FastifyRequest, publicUrl: string): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  return origin === new URL(publicUrl).origin || origin === `${request.protocol}://${request.host}`;
}

/**
 * The request's address without `lang`, as a path on this origin. Resolving the dots of `/dashboard/..//evil.example/`
 * leaves `//evil.example/` (backslashes read as slashes), which a client takes for another host: the leading slashes
 * become one.
 */
function withoutLang(requestUrl: string): string {
  const url = new URL(requestUrl, 'http://dashboard');
  url.searchParams.delete('lang');
  return `/${url.pathname.replace(/^\/+/, '')}${url.search}`;
}

/** `?lang=` on a page view sets the language and comes back without it; a POST needs its form token and this origin. */
export function guardForms(app: FastifyInstance, publicUrl: string): void {
  app.addHook('preHandler', async (request, reply) => {
    const dash = dashOf(request);
    const lang = (request.query as Record<string, unknown> | undefined)?.lang;
    if (request.method === 'GET' && isLang(lang)) {
      setLanguageCookie(reply, dash, lang);
      return reply.redirect(withoutLang(request.url), 303);
    }
    if (request.method !== 'POST') return;
    const form = (request.body ?? {}) as Form;
    if (!sameOrigin(request, publicUrl) || !tokensEqual(form._csrf, dash.csrf)) throw new DashboardError(403, 'forbidden');
  });
}

export type ShowError = (request: FastifyRequest, reply: FastifyReply, status: number, key: 'notFound' | 'forbidden' | 'badForm' | 'tooManyRequests' | 'unavailable') => FastifyReply;

/**
 * Errors shown as pages of a surface: what happened and the way back to `dash.base`, in the surface's frame; plain text
 * before the request has its context.
 */
export function errorPages(frame: (request: FastifyRequest, dash: Dash, title: string, body: Html) => Html, back: MessageKey): ShowError {
  return (request, reply, status, key) => {
    const dash = request.dash;
    if (dash === null) return reply.code(status).type('text/plain; charset=utf-8').send(String(status));
    const body = html`<p>${dash.t(`${key}Explained`)}</p><p><a href="${dash.base}">${dash.t(back)}</a></p>`;
    return sendPage(reply, frame(request, dash, dash.t(key), body), status);
  };
}

/** A surface's own refusals, answered before the shared ones; null for an error it does not know. */
type OwnErrors = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => FastifyReply | null;

/** Errors as the surface's pages: no session sends a page view to the log-in; no stack or 500 page shows anything. */
export function renderErrors(app: FastifyInstance, show: ShowError, own: OwnErrors = () => null): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const answered = own(error, request, reply);
    if (answered !== null) return answered;
    if (error instanceof SignInRequired) return request.method === 'GET' ? reply.redirect(`${dashOf(request).base}/login`, 303) : show(request, reply, 403, 'forbidden');
    if (error instanceof DashboardError) return show(request, reply, error.statusCode, error.messageKey);
    if (error instanceof ApiError && error.statusCode === 404) return show(request, reply, 404, 'notFound');
    if (error instanceof ApiError && error.statusCode === 429) return show(request, reply, 429, 'tooManyRequests');
    if ((error instanceof ApiError && error.statusCode === 503) || isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'page refused: service unavailable');
      return show(request, reply.header('Retry-After', '1'), 503, 'unavailable');
    }
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    if (status >= 400 && status < 500) return show(request, reply, 400, 'badForm');
    request.log.error({ err: error }, 'page request failed');
    return reply.code(500).type('text/plain; charset=utf-8').send('Internal error');
  });
  app.setNotFoundHandler((request, reply) => show(request, reply, 404, 'notFound'));
}
