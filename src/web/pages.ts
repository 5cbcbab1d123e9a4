// The hosted pages (paying, binding a card, the buyer's receipt), their assets and the products' branding. A payment
// page's first HTML shows the session; its script then drives the public session calls.
import { readFile } from 'node:fs/promises';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { CheckoutService } from '../modules/checkout/service.js';
import { TokenParams, type SessionState } from '../modules/checkout/schema.js';
import type { ProductsService } from '../modules/products/service.js';
import { brandStylesheet } from './brand-colors.js';
import { checkoutPageHtml } from './checkout-page.js';
import { pageHeaders } from './headers.js';
import { qrSvg, receiptPageHtml } from './receipt-page.js';
import { cookiesOf, isLang, languageOf, type Lang } from './language.js';

const ASSETS_DIR = new URL('./assets/', import.meta.url);
const ASSET_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};
const ASSET_NAME = /^[a-z0-9-]+\.(js|css|svg)$/;
const ASSET_MAX_AGE_SECONDS = 3600;
/** A page's query: only the language is read; anything else a link carries (a shop's tracking tags) is let be. */
export const PageQuery = Type.Object({ lang: Type.Optional(Type.String()) });

/** Where the buyer's choice of language is remembered (by the page's script), for every hosted page. */
const LANGUAGE_COOKIE = 'tolov_pay_lang';
const BRAND_CACHE = 'public, max-age=31536000, immutable';

/** The buyer's language: `?lang=`, else their earlier choice on a page, else the browser's, else Uzbek. */
export function buyerLanguage(request: FastifyRequest<{ Querystring: { lang?: string } }>): Lang {
  const asked = request.query.lang;
  return isLang(asked) ? asked : languageOf(cookiesOf(request.headers.cookie).get(LANGUAGE_COOKIE), request.headers['accept-language']);
}

/** A buyer's receipt: its printable page and its QR code. */
function receiptRoutes(app: FastifyInstance, checkout: CheckoutService): void {
  const config = { auth: { kind: 'public' } } as const;
  // From the link the paid screen and the merchant give; an unknown link gets the hosted pages' own "not found" page.
  // The token is in the URL: never sent on as a referrer.
  const schema = { hide: true, params: TokenParams, querystring: PageQuery };
  app.get('/receipts/:token', { config, schema }, async (request: FastifyRequest<{ Params: TokenParams; Querystring: { lang?: string } }>, reply) => {
    const receipt = await checkout.receiptPage(request.params.token);
    const lang = buyerLanguage(request);
    pageHeaders(reply, { formAction: "'none'", referrer: 'no-referrer' }).header('Vary', 'Accept-Language, Cookie').type('text/html; charset=utf-8');
    if (!receipt) return reply.code(404).send(checkoutPageHtml(null, lang));
    return reply.send(receiptPageHtml(receipt, receipt.qrUrl === null ? null : await qrSvg(receipt.qrUrl), lang));
  });

  // The QR code of a registered receipt, for the paid screen (the printable page draws it inline). It never changes.
  app.get<{ Params: TokenParams }>('/receipts/:token/qr.svg', { config, schema: { hide: true, params: TokenParams } }, async (request, reply) => {
    const qrUrl = (await checkout.receiptPage(request.params.token))?.qrUrl;
    if (!qrUrl) return reply.callNotFound();
    return reply
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Security-Policy', "default-src 'none'")
      .header('Cross-Origin-Resource-Policy', 'same-origin')
      .header('Cache-Control', 'private, max-age=86400, immutable')
      .type('image/svg+xml')
      .send(await qrSvg(qrUrl));
  });
}

export const pageRoutes: FastifyPluginAsync<{ checkout: CheckoutService; products: ProductsService }> = async (app, { checkout, products }) => {
  const config = { auth: { kind: 'public' } } as const;
  // One page for both kinds of session: its state says whether it binds a card or pays.
  const servePage =
    (kind: SessionState['kind']) => async (request: FastifyRequest<{ Params: TokenParams; Querystring: { lang?: string } }>, reply: FastifyReply) => {
      const page = await checkout.pageOf(request.params.token);
      const found = page?.state.kind === kind ? page : null;
      // An unknown link still gets the page, which explains itself, but with the status a crawler or a test can see.
      // The token is in the URL: never send it to another site as a referrer.
      return pageHeaders(reply, { formAction: "'none'", referrer: 'no-referrer' })
        .header('Vary', 'Accept-Language, Cookie')
        .code(found ? 200 : 404)
        .type('text/html; charset=utf-8')
        .send(checkoutPageHtml(found, buyerLanguage(request)));
    };
  const schema = { hide: true, params: TokenParams, querystring: PageQuery };
  app.get('/bind/:token', { config, schema }, servePage('card_binding'));
  app.get('/pay/:token', { config, schema }, servePage('order'));

  receiptRoutes(app, checkout);

  // A product's logo, named by its content: the same address always means the same image.
  app.get<{ Params: { digest: string } }>('/brand/logos/:digest', { config, schema: { hide: true } }, async (request, reply) => {
    const { digest } = request.params;
    const logo = /^[0-9a-f]{64}$/.test(digest) ? await products.logo(digest) : undefined;
    if (!logo) return reply.callNotFound();
    return reply
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Security-Policy', "default-src 'none'")
      .header('Cross-Origin-Resource-Policy', 'same-origin')
      .header('Cache-Control', BRAND_CACHE)
      .type(logo.contentType)
      .send(logo.body);
  });

  // A brand colour's stylesheet depends on the colour alone: one address per colour, cached for good.
  app.get<{ Params: { file: string } }>('/brand/colors/:file', { config, schema: { hide: true } }, async (request, reply) => {
    const hex = /^([0-9a-f]{6})\.css$/.exec(request.params.file)?.[1];
    if (hex === undefined) return reply.callNotFound();
    return reply.header('X-Content-Type-Options', 'nosniff').header('Cache-Control', BRAND_CACHE).type('text/css; charset=utf-8').send(brandStylesheet(hex));
  });

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
