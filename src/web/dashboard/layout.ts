// The frame of every dashboard page: the head, the account bar with the test/live switch, the navigation, languages.
import { randomUUID } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { pageHeaders } from '../headers.js';
import type { Dash, Signed } from './context.js';
import { html, pageStart, type Html, type Value } from '../html.js';
import { LANGS, LANGUAGE_NAMES, type MessageKey } from './i18n.js';

export type Section = 'start' | 'activation' | 'overview' | 'payments' | 'orders' | 'paymentLinks' | 'refunds' | 'statement' | 'payouts' | 'receipts' | 'cards' | 'events' | 'logs' | 'webhooks' | 'keys' | 'payoutAccount' | 'branding' | 'team' | 'account';

const NAV: Array<{ section: Section; href: string; label: MessageKey }> = [
  { section: 'start', href: '/dashboard/start', label: 'navStart' },
  { section: 'activation', href: '/dashboard/activation', label: 'navActivation' },
  { section: 'overview', href: '/dashboard/overview', label: 'navOverview' },
  { section: 'payments', href: '/dashboard/payments', label: 'navPayments' },
  { section: 'orders', href: '/dashboard/orders', label: 'navOrders' },
  { section: 'paymentLinks', href: '/dashboard/payment-links', label: 'navPaymentLinks' },
  { section: 'refunds', href: '/dashboard/refunds', label: 'navRefunds' },
  { section: 'statement', href: '/dashboard/statement', label: 'navStatement' },
  { section: 'payouts', href: '/dashboard/payouts', label: 'navPayouts' },
  { section: 'receipts', href: '/dashboard/receipts', label: 'navReceipts' },
  { section: 'cards', href: '/dashboard/cards', label: 'navCards' },
  { section: 'events', href: '/dashboard/events', label: 'navEvents' },
  { section: 'webhooks', href: '/dashboard/webhooks', label: 'navWebhooks' },
  { section: 'keys', href: '/dashboard/api-keys', label: 'navApiKeys' },
  { section: 'logs', href: '/dashboard/logs', label: 'navRequestLog' },
  { section: 'payoutAccount', href: '/dashboard/payout-account', label: 'navPayoutAccount' },
  { section: 'branding', href: '/dashboard/branding', label: 'navBranding' },
  { section: 'team', href: '/dashboard/team', label: 'navTeam' },
];

/** A hidden field with a new idempotency key: the same form posted twice (a double click, a retry) does its work once. */
export const formKeyField = () => html`<input type="hidden" name="idempotencyKey" value="${randomUUID()}">`;

/** A hidden field with the request's form token: every form that posts carries it. */
export const csrfField = (dash: Dash) => html`<input type="hidden" name="_csrf" value="${dash.csrf}">`;

/** Links to the page in each language (the current one marked). */
export function languages(dash: Dash, path: string): Html {
  const links = LANGS.map((lang) =>
    lang === dash.lang
      ? html`<span aria-current="true" lang="${lang}">${LANGUAGE_NAMES[lang]}</span>`
      : html`<a href="${path}${path.includes('?') ? '&' : '?'}lang=${lang}" lang="${lang}" hreflang="${lang}">${LANGUAGE_NAMES[lang]}</a>`,
  );
  return html`<nav class="languages" aria-label="Til · Язык · Language">${links}</nav>`;
}

function modeSwitch(dash: Dash, signed: Signed): Html {
  const { t } = dash;
  const live = signed.session.livemode;
  if (!live && !signed.product.live_enabled) {
    return html`<div class="mode"><span class="mode-badge test">${t('testMode')}</span>
      <button type="button" disabled aria-describedby="live-off">${t('switchToLive')}</button>
      <p class="hint" id="live-off">${t('liveOffExplained')} <a href="/dashboard/activation">${t('liveOffLink')}</a></p></div>`;
  }
  return html`<form class="mode" method="post" action="/dashboard/mode">${csrfField(dash)}
    <span class="mode-badge ${live ? 'live' : 'test'}">${live ? t('liveMode') : t('testMode')}</span>
    <input type="hidden" name="mode" value="${live ? 'test' : 'live'}">
    <button type="submit">${live ? t('switchToTest') : t('switchToLive')}</button></form>`;
}

function accountBar(dash: Dash, signed: Signed, current: Section): Html {
  const { t } = dash;
  const nav = NAV.filter((item) => item.section !== 'keys' || signed.session.role !== 'viewer').map(
    (item) => html`<a href="${item.href}"${item.section === current ? html` aria-current="page"` : ''}>${t(item.label)}</a>`,
  );
  return html`<header class="bar">
  <div class="who"><strong>${signed.session.account_name}</strong><span><a href="/dashboard/account" aria-label="${t('accountSecurity')}: ${signed.session.email}">${signed.session.email}</a> · ${t(`role_${signed.session.role}`)}</span></div>
  ${modeSwitch(dash, signed)}
  <form class="logout" method="post" action="/dashboard/logout">${csrfField(dash)}<button type="submit" class="quiet">${t('logOut')}</button></form>
</header>
${signed.session.livemode ? '' : html`<p class="test-banner">${t('testBanner')}</p>`}
${suspensionBanner(dash, signed)}
${holdBanner(dash)}
<nav class="sections" aria-label="${t('sections')}">${nav}</nav>`;
}

/** While Tolov has the product suspended, every page says so, why, and what still works. */
function suspensionBanner(dash: Dash, signed: Signed): Value {
  const { suspended_at: since, suspension_reason: reason } = signed.product;
  if (since === null) return '';
  const { t } = dash;
  return html`<div class="hold-banner" role="alert"><p><strong>${t('suspendedTitle')}</strong> ${t('suspendedBanner', { since: when(since.toISOString()), reason: reason ?? '' })}</p></div>`;
}

/**
 * While a change of the payout account holds the mode's payouts, every page of the mode says so, to every member: the
 * one who did not make the change is the one who must see it.
 */
function holdBanner(dash: Dash): Value {
  const hold = dash.payoutHold;
  if (hold === null) return '';
  const { t } = dash;
  return html`<div class="hold-banner" role="status"><p><strong>${t('payoutHoldTitle')}</strong> ${t('payoutHoldBanner', { changed: when(hold.changed), until: when(hold.until) })}
  <a href="/dashboard/payout-account">${t('seePayoutAccount')}</a></p></div>`;
}

/** A whole page; `signed` null for the pages before log-in. */
export function page(dash: Dash, options: { title: string; path: string; section?: Section; body: Value; head?: Value }): Html {
  const { signed } = dash;
  return html`${pageStart(dash.lang, `${options.title} · Tolov`, 'same-origin')}
<link rel="stylesheet" href="/assets/dashboard.css">
<script type="module" src="/assets/dashboard.js"></script>
${options.head ?? ''}
</head>
<body data-path="${options.path}">
<div class="top"><a class="brand" href="/dashboard">Tolov</a>${languages(dash, options.path)}</div>
${signed ? accountBar(dash, signed, options.section ?? 'account') : ''}
<main id="main"${signed ? '' : html` class="entry"`}>
<h1>${options.title}</h1>
${options.body}
</main>
</body>
</html>
`;
}

/** Sends a page with the dashboard's headers. */
export function sendPage(reply: FastifyReply, body: Html, status = 200): FastifyReply {
  // Same-origin referrers: links out carry no address (an invitation link holds a token), and form posts keep their Origin.
  return pageHeaders(reply.code(status), { formAction: "'self'", referrer: 'same-origin' })
    .type('text/html; charset=utf-8')
    .send(body.text);
}

/** A notice above a page's content: what just happened, or what went wrong. */
export const notice = (kind: 'ok' | 'error', text: string | Html | null | undefined) =>
  text ? html`<p class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>` : '';

/** A time as the user reads it: UTC, to the second. */
export const when = (date: Date | string | null) => (date === null ? '—' : new Date(date).toISOString().replace('T', ' ').slice(0, 19) + ' UTC');

/** A time in a table: as `when` writes it, in an element that keeps it on one line. */
export const timeElement = (date: Date | string | null) => (date === null ? '—' : html`<time datetime="${new Date(date).toISOString()}">${when(date)}</time>`);

/**
 * A time in a table of many columns: as `when` writes it, the day and the time of day each kept whole, so that a
 * narrow column puts the time under the day rather than push the table past the screen.
 */
export const wrappingTime = (date: string) => {
  const text = when(date);
  return html`<time class="wraps" datetime="${new Date(date).toISOString()}"><span>${text.slice(0, 10)}</span> <span>${text.slice(11)}</span></time>`;
};

/** A secret shown once, with a copy button (the script enables it). */
export function shownOnce(dash: Dash, label: string, secret: string, id: string): Html {
  return html`<div class="secret" role="group" aria-labelledby="${id}-label">
  <p id="${id}-label"><strong>${label}</strong></p>
  <p class="hint">${dash.t('shownOnce')}</p>
  <div class="copy-row"><code id="${id}">${secret}</code><button type="button" class="copy" data-copy="${id}">${dash.t('copy')}</button></div>
</div>`;
}
