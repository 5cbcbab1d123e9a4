import { STATUS_CODES } from 'node:http';

/** The closed set of error codes, each with its one HTTP status (docs/errors.md lists them). */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  IDEMPOTENCY_KEY_REQUIRED: 400,
  CARD_INACTIVE: 400,
  INVALID_CARD: 400,
  WRONG_CODE: 400,
  PARTIAL_REFUND_NOT_SUPPORTED: 400,
  RECEIPT_MISMATCH: 400,
  RECEIPT_REQUIRED: 400,
  UNAUTHENTICATED: 401,
  PAYMENT_FAILED: 402,
  SCOPE_REQUIRED: 403,
  PRODUCT_SUSPENDED: 403,
  NOT_FOUND: 404,
  IDEMPOTENCY_KEY_IN_USE: 409,
  ORDER_DEBIT_IN_PROGRESS: 409,
  ORDER_NOT_CANCELABLE: 409,
  INVALID_STATE: 409,
  LIMIT_REACHED: 409,
  ALREADY_REFUNDED: 409,
  PAYMENT_NOT_REFUNDABLE: 409,
  INSUFFICIENT_BALANCE: 409,
  PAYOUTS_HELD: 409,
  PAYOUT_ACCOUNT_REQUIRED: 409,
  PAYOUT_NOT_CANCELABLE: 409,
  REQUEST_TIMEOUT: 408,
  SESSION_EXPIRED: 410,
  BODY_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  TOO_MANY_ATTEMPTS: 429,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  RAIL_UNAVAILABLE: 503,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  statusCode: number;
  error: string;
  code: ErrorCode;
  message: string;
  param?: string;
  failureCode?: string;
  requestId: string;
}

/** An expected failure with a client-facing message. Anything else that is thrown becomes INTERNAL_ERROR. */
export class ApiError extends Error {
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: { param?: string; failureCode?: string; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.statusCode = ERROR_STATUS[code];
  }

  body(requestId: string): ErrorBody {
    return {
      statusCode: this.statusCode,
      error: STATUS_CODES[this.statusCode] ?? 'Error',
      code: this.code,
      message: this.message,
      ...(this.extra.param === undefined ? {} : { param: this.extra.param }),
      ...(this.extra.failureCode === undefined ? {} : { failureCode: this.extra.failureCode }),
      requestId,
    };
  }
}

export const notFound = (what: string) => new ApiError('NOT_FOUND', `No such ${what}`);

// Connection-level database failures (down, restarting, unreachable, out of connections), and a primary lost to a
// failover (a standby refusing a write): the request may be retried once the database is back.
const DATABASE_UNAVAILABLE = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE',
  '57P01', '57P02', '57P03', '08000', '08003', '08006', '53300', '25006', 'ENOTPRIMARY',
]);

/** Whether `error` says the database cannot be reached now, rather than that the request was wrong. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return DATABASE_UNAVAILABLE.has(String(code)) || /Connection terminated|timeout exceeded when trying to connect/.test(String(message));
}

export const serviceUnavailable = () =>
  new ApiError('SERVICE_UNAVAILABLE', 'The service is briefly unavailable; retry shortly', { headers: { 'Retry-After': '1' } });
