// Getting started: the first test key (shown once, right after sign-up) and the three steps to a first payment and its
// webhook, written with this Tolov's own address so that they can be pasted as they are.
import type { FastifyInstance } from 'fastify';
import { dashOf, ROUTE, signedIn, type Dash, type Signed } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { html, type Html } from '../../html.js';
import { page, sendPage, shownOnce } from '../layout.js';

export const START_PATH = '/dashboard/start';

/** The body of the first order the page suggests. */
const FIRST_ORDER = { amount: 1_500_000, description: 'Order #1001', customerRef: 'customer-77', returnUrl: 'https://shop.example.uz/orders/1001' };

function createOrder(publicUrl: string, key: string): string {
  return `curl -s -X POST ${publicUrl}/merchant/v1/orders \\
  -u ${key}: -H 'Content-Type: application/json' -H 'Idempotency-Key: order-1001' \\
  -d '${JSON.stringify(FIRST_ORDER)}'`;
}

function steps(dash: Dash, publicUrl: string, key: string): Html {
  const { t } = dash;
  return html`<ol class="steps">
  <li><h2>${t('startCreateOrder')}</h2><p>${t('startCreateOrderText')}</p><pre><code>${createOrder(publicUrl, key)}</code></pre></li>
  <li><h2>${t('startPay')}</h2><p>${t('startPayText')}</p></li>
  <li><h2>${t('startWebhook')}</h2><p>${t('startWebhookText')}</p>
    <p><a href="/dashboard/webhooks">${t('navWebhooks')}</a> · <code>npx tolov listen --forward-to http://localhost:3000/tolov/webhooks</code></p></li>
</ol>
<p>${t('startMore')} <a href="/docs/api">${t('apiReference')}</a></p>
<h2>${t('startGoLive')}</h2>
<p>${t('startGoLiveText')} <a href="/dashboard/activation">${t('navActivation')}</a></p>`;
}

/** The page; `testKey` is the secret of the key made at sign-up, given only in the answer to the sign-up itself. */
export function startPage(dash: Dash, signed: Signed, publicUrl: string, testKey?: string): Html {
  const { t } = dash;
  const key = testKey ?? 'sk_test_…';
  const body = html`<p>${t('startIntro')}</p>
${testKey ? shownOnce(dash, t('yourTestKey'), testKey, 'test-key') : html`<p>${t('startKeysElsewhere')} <a href="/dashboard/api-keys">${t('navApiKeys')}</a></p>`}
${signed.session.livemode ? html`<p class="notice ok">${t('startInLiveMode')}</p>` : ''}
${steps(dash, publicUrl, key)}`;
  return page(dash, { title: t('startTitle'), path: START_PATH, section: 'start', body });
}

export function startPages(app: FastifyInstance, { publicUrl }: DashboardDeps): void {
  app.get('/start', ROUTE, async (request, reply) => sendPage(reply, startPage(dashOf(request), signedIn(request), publicUrl)));
}
