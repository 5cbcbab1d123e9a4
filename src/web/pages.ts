// The hosted pages and their assets. Pages are a static shell; their script drives the public session calls.
import { readFile } from 'node:fs/promises';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { CheckoutService } from '../modules/checkout/service.js';
import { TokenParams } from '../modules/checkout/schema.js';
import { pageHeaders } from './headers.js';

const ASSETS_DIR = new URL('./assets/', import.meta.url);
const ASSET_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};
const ASSET_NAME = /^[a-z0-9-]+\.(js|css|svg)$/;
const ASSET_MAX_AGE_SECONDS = 3600;

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/** The page's HTML; `returnUrl` (the shop's address, if it gave one) is handed to the script in an attribute. */
function shell(script: string, returnUrl: string | null): string {
  return `<!doctype html>
<html lang="uz">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>Tolov</title>
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/theme.css">
<link rel="stylesheet" href="/assets/checkout.css">
<script type="module" src="/assets/${script}"></script>
</head>
<body>
<main class="sheet"${returnUrl === null ? '' : ` data-return-url="${escapeHtml(returnUrl)}"`}>
  <header class="top">
    <span class="brand">Tolov</span>
    <nav class="languages" id="languages" aria-label="Til · Язык · Language"></nav>
  </header>
  <p class="merchant" id="merchant"></p>
  <p class="badge-test" id="test-mode" hidden></p>
  <div id="symbol" class="symbol" aria-hidden="true" hidden></div>
  <h1 id="title"></h1>
  <section id="view" aria-live="polite"></section>
  <p class="secure" id="secure"></p>
</main>
<noscript><p>JavaScript kerak · Нужен JavaScript · JavaScript is required</p></noscript>
</body>
</html>
`;
}

export const pageRoutes: FastifyPluginAsync<{ checkout: CheckoutService }> = async (app, { checkout }) => {
  const config = { auth: { kind: 'public' } } as const;
  // One page for both kinds of session: its script learns from the session state whether it binds a card or pays.
  const servePage = (kind: 'card_binding' | 'order') => async (request: FastifyRequest<{ Params: TokenParams }>, reply: FastifyReply) => {
    const session = await checkout.pageOf(request.params.token);
    const found = session?.kind === kind;
    // An unknown link still gets the page, which explains itself, but with the status a crawler or a test can see.
    // The token is in the URL: never send it to another site as a referrer.
    return pageHeaders(reply, { formAction: "'none'", referrer: 'no-referrer' })
      .code(found ? 200 : 404)
      .type('text/html; charset=utf-8')
      .send(shell('checkout.js', found ? session.returnUrl : null));
  };
  app.get('/bind/:token', { config, schema: { hide: true, params: TokenParams } }, servePage('card_binding'));
  app.get('/pay/:token', { config, schema: { hide: true, params: TokenParams } }, servePage('order'));

  const assets = new Map<string, Buffer>();
  app.get<{ Params: { name: string } }>('/assets/:name', { config, schema: { hide: true } }, async (request, reply) => {
    const { name } = request.params;
    if (!ASSET_NAME.test(name)) return reply.callNotFound();
    let body = assets.get(name);
    if (body === undefined) {
      try {
        body = await readFile(new URL(name, ASSETS_DIR));
      } catch {
        return reply.callNotFound();
      }
      assets.set(name, body);
    }
    return reply
      .header('X-Content-Type-Options', 'nosniff')
      .header('Cache-Control', `public, max-age=${ASSET_MAX_AGE_SECONDS}`)
      .type(ASSET_TYPES[name.slice(name.lastIndexOf('.'))]!)
      .send(body);
  });
};
