// Records what the API answers, by operation: the first success of each operation is its example, and each error code
// an operation answers is an example of that error for it. Calls go through the service's HTTP surface (inject), and
// each is matched to the operation of the OpenAPI description whose path and method it takes.
import type { FastifyInstance } from 'fastify';
import type { ErrorBody, ErrorCode } from '../../src/core/errors.js';
import type { Db } from '../../src/db/types.js';
import type { RecordedExamples } from '../../src/http/openapi.js';

export interface Call {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  /** A secret key (Bearer), or the operator token. */
  key?: string;
  body?: unknown;
  /** Sent as is, with its own content type. */
  payload?: { text: string; type: string };
  idempotencyKey?: string;
  /** The client's address: throttles count per address. */
  remoteAddress?: string;
  /** False: this call's success is not the operation's example. */
  example?: false;
}

export interface Reply {
  status: number;
  // Scenarios read arbitrary fields of the answers.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface Operation {
  operationId: string;
  method: string;
  path: string;
  /** The operation's OpenAPI object. */
  described: Record<string, unknown>;
}

interface Route extends Operation {
  pattern: RegExp;
  params: number;
}

const METHODS = new Set(['get', 'post', 'delete']);

/** Every operation of the description, with its path as a pattern; static paths first (/v1/events/stream before /v1/events/{id}). */
export function operationsOf(document: { paths: Record<string, Record<string, Record<string, unknown>>> }): Route[] {
  const routes = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([method]) => METHODS.has(method))
      .map(([method, described]) => ({
        operationId: described.operationId as string,
        method: method.toUpperCase(),
        path,
        described,
        pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
        params: (path.match(/\{/g) ?? []).length,
      })),
  );
  return routes.sort((a, b) => a.params - b.params);
}

export class Recorder {
  readonly examples: RecordedExamples = { operations: {}, errors: {}, events: {} };
  /** The call each example was recorded from, to call the operation again with something changed. */
  readonly exampleCalls = new Map<string, Call>();
  readonly routes: Route[];

  constructor(
    readonly app: FastifyInstance,
    readonly db: Db,
    readonly adminToken: string,
    document: Parameters<typeof operationsOf>[0],
  ) {
    this.routes = operationsOf(document);
  }

  operationOf(method: string, url: string): Route {
    const path = url.split('?')[0]!;
    const route = this.routes.find((candidate) => candidate.method === method && candidate.pattern.test(path));
    if (!route) throw new Error(`${method} ${path} is no operation of the description`);
    return route;
  }

  async call(call: Call): Promise<Reply> {
    const headers: Record<string, string> = {};
    if (call.key !== undefined) headers.authorization = `Bearer ${call.key}`;
    if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    if (call.payload !== undefined) headers['content-type'] = call.payload.type;
    const payload = call.payload?.text ?? (call.body === undefined ? undefined : JSON.stringify(call.body));
    const response = await this.app.inject({
      method: call.method,
      url: call.url,
      headers,
      remoteAddress: call.remoteAddress ?? '127.0.0.1',
      ...(payload === undefined ? {} : { payload }),
    });
    const json = (response.headers['content-type'] ?? '').toString().startsWith('application/json');
    const reply: Reply = { status: response.statusCode, body: json ? response.json() : response.body };
    this.record(call, reply);
    return reply;
  }

  /** The call as the operator would make it. */
  admin(method: Call['method'], url: string, body?: unknown): Promise<Reply> {
    return this.call({ method, url, key: this.adminToken, ...(body === undefined ? {} : { body }) });
  }

  private record(call: Call, reply: Reply): void {
    const { operationId } = this.operationOf(call.method, call.url);
    if (reply.status >= 400) {
      const code = (reply.body as ErrorBody).code as ErrorCode;
      const errors = (this.examples.errors[operationId] ??= {});
      errors[code] ??= reply.body as ErrorBody;
      return;
    }
    if (call.example === false || operationId in this.examples.operations) return;
    this.examples.operations[operationId] = { ...(call.body === undefined ? {} : { request: call.body }), status: reply.status, response: reply.body };
    this.exampleCalls.set(operationId, call);
  }

  /** Fails unless `reply` has `status`: a scenario that went astray must not record the wrong examples. */
  static expect(reply: Reply, status: number, what: string): Reply {
    if (reply.status !== status) throw new Error(`${what}: expected ${status}, got ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply;
  }
}
