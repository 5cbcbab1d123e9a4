// The refusals every operation of a kind answers, provoked the same way for each, from what the operation declares:
// no credential, a throttled address, a key without the scope, an object that does not exist, an invalid input, a
// missing, reused or busy Idempotency-Key, a body of another type or too large. Each probe takes the operation's
// recorded call (its example) and changes one thing.
import { randomBase62 } from '../../src/lib/random.js';
import type { Call, Operation, Recorder } from './recorder.js';

interface Keys {
  /** The shop's test key, for operations that have no recorded call. */
  test: string;
  /** Test keys of products that lack one scope each. */
  limited: string[];
}

type Parameter = { in: string; name: string; required?: boolean };

/** The per-address limit of failed authentications (TOLOV_RATE_LIMIT_AUTH_FAILURES_PER_MINUTE's default) and one more. */
const AUTH_FAILURES_TO_THROTTLE = 21;
/** The per-session request limit (TOLOV_RATE_LIMIT_SESSION_PER_MINUTE's default) and one more. */
const SESSION_CALLS_TO_THROTTLE = 61;
/** An address's failures count for a minute: a throttled address is made anew when half of it has passed. */
const THROTTLED_FOR_MS = 30_000;
const TOO_LARGE = 65 * 1024;
const WRONG_KEY = 'sk_test_0000000000000000000000000000';

const parametersOf = (operation: Operation) => (operation.described.parameters as Parameter[] | undefined) ?? [];
const hasBody = (operation: Operation) => operation.described.requestBody !== undefined;
/** Who may call it: undefined is the document's default, the secret key; [] is anyone. */
const securityOf = (operation: Operation) => operation.described.security as unknown[] | undefined;
const isOperator = (operation: Operation) => JSON.stringify(securityOf(operation) ?? []).includes('operatorToken');

/** `value` with its random tail made anew: an id (or token) of the same kind that names nothing. */
const another = (value: string) => (value.includes('_') ? `${value.slice(0, value.lastIndexOf('_') + 1)}${randomBase62(24)}` : randomBase62(24));

/** The call's URL with each path parameter changed by `change`, which is given its value and its name. */
function withParams(operation: Operation, url: string, change: (value: string, name: string) => string): string {
  const template = operation.path.split('/');
  const path = url.split('?')[0]!.split('/');
  return path.map((segment, index) => (template[index]?.startsWith('{') ? change(segment, template[index]!.slice(1, -1)) : segment)).join('/');
}

export class Probes {
  private addresses = 0;
  private keys = 0;
  private throttled = { address: '', sinceMs: 0 };

  constructor(
    private readonly s: Recorder,
    private readonly shop: Keys,
  ) {}

  /** Every probe of every operation; those that change a valid call only where one was recorded (not the event stream). */
  async run(): Promise<void> {
    for (const operation of this.s.routes) {
      const example = this.s.exampleCalls.get(operation.operationId);
      await this.credentials(operation, example);
      await this.inputs(operation, example);
      if (!example) continue;
      await this.scopes(operation, example);
      await this.missing(operation, example);
      await this.idempotency(operation, example);
      await this.transport(operation, example);
    }
  }

  /** A client address no throttle has counted yet. */
  private address(): string {
    this.addresses += 1;
    return `10.0.${this.addresses >> 8}.${this.addresses & 255}`;
  }

  /** An address whose failed authentications are over the limit: any call from it with a wrong credential answers 429. */
  private async throttledAddress(): Promise<string> {
    if (Date.now() - this.throttled.sinceMs < THROTTLED_FOR_MS) return this.throttled.address;
    this.throttled = { address: this.address(), sinceMs: Date.now() };
    for (let attempt = 0; attempt < AUTH_FAILURES_TO_THROTTLE; attempt++) {
      await this.s.call({ method: 'GET', url: '/v1/balance', key: WRONG_KEY, remoteAddress: this.throttled.address });
    }
    return this.throttled.address;
  }

  private freshKey(): string {
    this.keys += 1;
    return `probe-${this.keys}`;
  }

  /** The call without credential, then with a wrong one from a throttled address; a public call throttled per session. */
  private async credentials(operation: Operation, example: Call | undefined): Promise<void> {
    const url = example?.url ?? withParams(operation, operation.path, () => `id_${randomBase62(24)}`);
    const call: Call = { method: operation.method as Call['method'], url, ...(example?.body === undefined ? {} : { body: example.body }) };
    if (securityOf(operation)?.length === 0) {
      const token = withParams(operation, url, another);
      const address = this.address();
      for (let attempt = 0; attempt < SESSION_CALLS_TO_THROTTLE; attempt++) await this.s.call({ ...call, url: token, remoteAddress: address });
      return;
    }
    await this.s.call({ ...call, remoteAddress: this.address() });
    const wrong = isOperator(operation) ? 'not-the-operator-token' : WRONG_KEY;
    await this.s.call({ ...call, key: wrong, remoteAddress: await this.throttledAddress() });
  }

  /** An invalid body (an amount of 0, or a misspelt field), query parameter or path parameter; a path parameter past any id's length. */
  private async inputs(operation: Operation, example: Call | undefined): Promise<void> {
    const key = example?.key ?? (isOperator(operation) ? this.s.adminToken : this.shop.test);
    const base: Call = { method: operation.method as Call['method'], url: example?.url ?? operation.path, key, idempotencyKey: this.freshKey() };
    const body = example?.body as Record<string, unknown> | undefined;
    if (hasBody(operation) && body !== undefined) {
      await this.s.call({ ...base, body: 'amount' in body ? { ...body, amount: 0 } : { ...body, descripton: 'Order fulfilment' } });
    }
    const query = parametersOf(operation).filter((parameter) => parameter.in === 'query');
    if (query.length > 0) {
      const path = base.url.split('?')[0]!;
      await this.s.call({ ...base, url: query.some((parameter) => parameter.name === 'limit') ? `${path}?limit=0` : `${path}?expand=card` });
    }
    if (example && operation.path.includes('{')) {
      // An id past its 64 characters; a session token (up to 128) holding U+0000.
      const invalid = (value: string, name: string) => (name === 'id' ? value.padEnd(65, '0') : `${value}%00`);
      await this.s.call({ ...example, url: withParams(operation, example.url, invalid), idempotencyKey: this.freshKey() });
      await this.s.call({ ...example, url: withParams(operation, example.url, () => randomBase62(130)), idempotencyKey: this.freshKey() });
    }
  }

  /** The call with the keys of products that lack a scope. */
  private async scopes(operation: Operation, example: Call): Promise<void> {
    if (securityOf(operation) !== undefined) return;
    for (const key of this.shop.limited) await this.s.call({ ...example, key });
  }

  /** The call on objects that do not exist. */
  private async missing(operation: Operation, example: Call): Promise<void> {
    if (!operation.path.includes('{')) return;
    await this.s.call({ ...example, url: withParams(operation, example.url, another), idempotencyKey: this.freshKey() });
  }

  /** Without the Idempotency-Key, with one another call used, and with its own while it is still running. */
  private async idempotency(operation: Operation, example: Call): Promise<void> {
    const header = parametersOf(operation).find((parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key');
    if (!header || example.idempotencyKey === undefined) return;
    if (header.required) {
      const { idempotencyKey: _key, ...without } = example;
      await this.s.call(without);
    }
    const other = [...this.s.exampleCalls.values()].find((call) => call.idempotencyKey !== undefined && call.idempotencyKey !== example.idempotencyKey);
    await this.s.call({ ...example, idempotencyKey: other!.idempotencyKey! });
    // As if the first request were still running: its key holds no answer and is locked.
    await this.s.db.query('UPDATE idempotency_keys SET response_status = NULL, response_body = NULL, locked_at = now() WHERE key = $1', [example.idempotencyKey]);
    await this.s.call(example);
  }

  /** A body that is not JSON, and one over the size limit. */
  private async transport(operation: Operation, example: Call): Promise<void> {
    if (!hasBody(operation)) return;
    const { body: _body, ...call } = example;
    await this.s.call({ ...call, idempotencyKey: this.freshKey(), payload: { text: 'amount=1500000', type: 'application/x-www-form-urlencoded' } });
    await this.s.call({ ...call, idempotencyKey: this.freshKey(), payload: { text: JSON.stringify({ description: 'x'.repeat(TOO_LARGE) }), type: 'application/json' } });
  }
}
