import type { components } from './openapi.js';

export type ErrorBody = components['schemas']['Error'];
export type ErrorCode = ErrorBody['code'];

/** An answer of the API other than a success: its `code` says why (the same codes as in Tolov's docs/errors.md). */
export class TolovError extends Error {
  readonly statusCode: number;
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly failureCode: string | undefined;
  readonly requestId: string | undefined;

  constructor(body: ErrorBody) {
    super(body.message);
    this.name = 'TolovError';
    this.statusCode = body.statusCode;
    this.code = body.code;
    this.param = body.param;
    this.failureCode = body.failureCode;
    this.requestId = body.requestId;
  }
}

/** No answer came: the network failed or the call ran past its timeout, on every attempt. */
export class TolovConnectionError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause });
    this.name = 'TolovConnectionError';
  }
}
