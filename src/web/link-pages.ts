// A payment link's public addresses: its page (/l/{slug}), the Pay button's form, and its QR code to print or share.
// Only the form's post opens an order: a visit, a crawler or a messenger's link preview creates nothing.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import { ApiError } from '../core/errors.js';
import { RateLimiter } from '../core/rate-limit.js';
import { setNewest } from '../lib/bounded-map.js';
import type { PaymentLinksService } from '../modules/payment-links/service.js';
import { pageHeaders } from './headers.js';
import { buyerLanguage, PageQuery } from './pages.js';
import { linkPageHtml, type LinkScreen, type LinkView } from './link-page.js';

/** The form holds one short field; anything larger is not the page's. */
const FORM_BODY_MAX_BYTES = 1024;
const AMOUNT_TEXT_MAX = 20;
/** A QR code printed 10 cm wide at 300 dpi. */
const QR_PNG_WIDTH = 1200;
const QR_CACHE = 'public, max-age=86400';
/** QR images kept drawn, the oldest dropped first (a 1200-pixel PNG is about 10 KB). */
const QR_IMAGES_CACHED = 256;

// Any text fits the route: a malformed slug is a link that does not exist, with the not-found page.
const SlugParams = Type.Object({ slug: Type.String({ maxLength: 64 }) });
type SlugParams = { slug: string };
type PageRequest = FastifyRequest<{ Params: SlugParams; Querystring: { lang?: string } }>;

/**
 * So'm as a buyer types them, to tiyin: spaces and a mark before each group of three digits are grouping (1 500,
 * 1,500, 1.500), and a mark before one or two final digits is the decimal one (1500,50 or 1500.5). Null if not an amount.
 */
function tiyinOf(entered: string): number | null {
  const text = entered.replace(/[\s\u00a0\u202f]/g, '');
  const match = /^(\d{1,3}(?:[.,]\d{3})+|\d+)(?:[.,](\d{1,2}))?$/.exec(text);
  if (!match) return null;
  const tiyin = Number(match[1]!.replace(/[.,]/g, '')) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return Number.isSafeInteger(tiyin) ? tiyin : null;
}

function sendPage(reply: FastifyReply, status: number, screen: LinkScreen, request: PageRequest): FastifyReply {
  return pageHeaders(reply, { formAction: "'self'", referrer: 'no-referrer' })
    .header('Vary', 'Accept-Language, Cookie')
    .code(status)
    .type('text/html; charset=utf-8')
    .send(linkPageHtml(screen, buyerLanguage(request)));
}

/** The page's answer to the Pay button: the hosted payment page of a new order, or why there is none. */
async function pay(links: PaymentLinksService, request: PageRequest, reply: FastifyReply, link: LinkView): Promise<FastifyReply> {
  const entered = String((request.body as Record<string, unknown> | undefined)?.amount ?? '').slice(0, AMOUNT_TEXT_MAX);
  const chosen = link.amount === null ? tiyinOf(entered) : null;
  if (link.amount === null && chosen === null) return sendPage(reply, 400, { kind: 'form', link, refused: { entered } }, request);
  let opened;
  try {
    opened = await links.open(link.slug, chosen);
  } catch (error) {
    if (error instanceof ApiError && error.code === 'PRODUCT_SUSPENDED') return sendPage(reply, 403, { kind: 'suspended', link }, request);
    throw error;
  }
  switch (opened.outcome) {
    case 'opened':
      // The hosted page is this server's own: a path, whatever address the buyer reached the link by.
      return reply.header('Cache-Control', 'no-store').redirect(`${new URL(opened.paymentUrl).pathname}?lang=${buyerLanguage(request)}`, 303);
    case 'amount':
      return sendPage(reply, 400, { kind: 'form', link, refused: { entered } }, request);
    case 'not_found':
      return sendPage(reply, 404, { kind: 'not_found' }, request);
    case 'inactive':
      return sendPage(reply, 410, { kind: 'inactive', link }, request);
    case 'sold_out':
      return sendPage(reply, 409, { kind: 'sold_out', link }, request);
  }
}

export const linkPageRoutes: FastifyPluginAsync<{ paymentLinks: PaymentLinksService; addressRequestsPerMinute: number }> = async (
  app,
  { paymentLinks, addressRequestsPerMinute },
) => {
  const config = { auth: { kind: 'public' } } as const;
  const schema = { hide: true, params: SlugParams, querystring: PageQuery };
  // Each Pay opens an order: a script posting in a loop is slowed as the card pages slow one.
  const perAddress = new RateLimiter(addressRequestsPerMinute, 60_000);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_MAX_BYTES }, (_request, text, done) => {
    done(null, Object.fromEntries(new URLSearchParams(text as string)));
  });

  app.get('/l/:slug', { config, schema }, async (request: PageRequest, reply) => {
    const link = await paymentLinks.bySlug(request.params.slug);
    if (link === null) return sendPage(reply, 404, { kind: 'not_found' }, request);
    if (!link.active) return sendPage(reply, 410, { kind: 'inactive', link }, request);
    if (link.shop.suspended) return sendPage(reply, 403, { kind: 'suspended', link }, request);
    return sendPage(reply, 200, { kind: 'form', link }, request);
  });

  app.post('/l/:slug', { config, schema }, async (request: PageRequest, reply) => {
    perAddress.hit(request.ip);
    const link = await paymentLinks.bySlug(request.params.slug);
    if (link === null) return sendPage(reply, 404, { kind: 'not_found' }, request);
    return pay(paymentLinks, request, reply, link);
  });

  // The link's QR code, to print or to show on a screen; `?download` saves it as a file. A link's address never changes,
  // so its image is drawn once: a public address asked for it again and again costs no more CPU than a page.
  const images = new Map<string, string | Buffer>();
  const qrImage = async (url: string, format: 'svg' | 'png') => {
    const key = `${format} ${url}`;
    const cached = images.get(key);
    if (cached !== undefined) return cached;
    const image =
      format === 'svg'
        ? await QRCode.toString(url, { type: 'svg', margin: 4, errorCorrectionLevel: 'M' })
        : await QRCode.toBuffer(url, { type: 'png', width: QR_PNG_WIDTH, margin: 4, errorCorrectionLevel: 'M' });
    setNewest(images, key, image, QR_IMAGES_CACHED);
    return image;
  };
  const qrSchema = { hide: true, params: SlugParams, querystring: Type.Object({ download: Type.Optional(Type.String()) }) };
  for (const format of ['svg', 'png'] as const) {
    app.get(`/l/:slug/qr.${format}`, { config, schema: qrSchema }, async (request: FastifyRequest<{ Params: SlugParams; Querystring: { download?: string } }>, reply) => {
      const link = await paymentLinks.bySlug(request.params.slug);
      if (link === null) return reply.callNotFound();
      const image = await qrImage(link.url, format);
      if (request.query.download !== undefined) reply.header('Content-Disposition', `attachment; filename="tolov-${link.slug}.${format}"`);
      return reply
        .header('X-Content-Type-Options', 'nosniff')
        .header('Content-Security-Policy', "default-src 'none'")
        .header('Cache-Control', QR_CACHE)
        .type(format === 'svg' ? 'image/svg+xml' : 'image/png')
        .send(image);
    });
  }
};
