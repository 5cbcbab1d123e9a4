import type { FastifyServerOptions } from 'fastify';
import { maskPan } from '../rails/card-data.js';

// Paths that carry a bearer token (however many slashes precede it), and anything shaped like one of Tolov's tokens or
// secrets wherever it sits in the URL: each is replaced before the URL reaches a log line.
const TOKEN_IN_PATH = /\/(pay|bind|sessions|invite|confirm|reset)\/+[^/?#]+/g;
const TOKEN_ANYWHERE = /(cbs|cs|sk_test|sk_live|whsec)_[0-9A-Za-z]{8,}/g;
/** 13 digits or more, perhaps grouped by spaces (as typed, or %20 in a URL) or dashes. */
const CARD_NUMBER = /\d(?:(?:[ -]|%20)?\d){12,}/g;

/**
 * `text` with each run of digits that may be a card number masked as Tolov shows a card (first six, last four). Luhn
 * is not asked: a card number mistyped by one digit fails it yet is most of a card, and a tenth of other runs pass it,
 * so it would spare order numbers and timestamps only at random.
 */
export function maskCardNumbers(text: string): string {
  return text.replace(CARD_NUMBER, (run) => maskPan(run.replace(/%20|[ -]/g, '')));
}

export function redactUrl(url: string): string {
  const redacted = url
    .replace(TOKEN_IN_PATH, '/$1/[token]')
    .replace(TOKEN_ANYWHERE, '[token]')
    .replace(/\?.*$/, (query) => (query.length > 1 ? '?[query]' : ''));
  return maskCardNumbers(redacted);
}

/** Log options: requests are logged without headers or bodies; any card data or secret that reaches a log object is censored. */
export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        '*.pan',
        '*.phone',
        // The SMS code; `err.code` (a database error's SQLSTATE) stays readable.
        'body.code',
        'req.body.code',
        '*.expiry',
        '*.secret',
        '*.clientToken',
        '*.token',
        '*.authorization',
      ],
      censor: '[redacted]',
    },
    serializers: {
      req: (request: { method: string; url: string; ip?: string }) => ({
        method: request.method,
        url: redactUrl(request.url),
        remoteAddress: request.ip,
      }),
    },
  };
}
