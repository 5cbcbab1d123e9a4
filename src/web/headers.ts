// The headers every page of Tolov is sent with: nothing but this origin's own scripts, styles and images, no framing,
// no inline code, nothing cached.
import type { FastifyReply } from 'fastify';

function contentSecurityPolicy(formAction: "'none'" | "'self'", dataImages: boolean): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    dataImages ? "img-src 'self' data:" : "img-src 'self'",
    "connect-src 'self'",
    `form-action ${formAction}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/**
 * `formAction`: where the page's forms may post (the hosted pages post none, the dashboard's post to it);
 * `referrer`: what a link or a form sends as the referrer (a hosted page's address holds its token: nothing);
 * `dataImages`: the page's stylesheets draw icons as data: images (the API reference's library does).
 */
export function pageHeaders(
  reply: FastifyReply,
  options: { formAction: "'none'" | "'self'"; referrer: 'no-referrer' | 'same-origin'; dataImages?: boolean },
): FastifyReply {
  return reply
    .header('Content-Security-Policy', contentSecurityPolicy(options.formAction, options.dataImages ?? false))
    .header('X-Content-Type-Options', 'nosniff')
    .header('X-Frame-Options', 'DENY')
    .header('Referrer-Policy', options.referrer)
    .header('Cache-Control', 'no-store');
}
