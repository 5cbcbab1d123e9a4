// The API reference's examples (src/http/openapi-examples.json) are what the API answers: the recording runs again
// here, and its answers must have the committed examples' fields, types and deterministic values. Ids, tokens,
// secrets, times, messages and measured durations may differ from run to run; nothing else may.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS, type ErrorCode } from '../../src/core/errors.js';
import { EXAMPLES_FILE, type RecordedExamples } from '../../src/http/openapi.js';
import { RECORDING_ENV, recordApiExamples } from '../../scripts/api-examples/record.js';
import { ADMIN_TOKEN, startService, type TestService } from '../support/harness.js';

const RECORD = 'node --import tsx scripts/record-api-examples.ts && npm run sdk:types';
/** Written for people, random, or measured, or signed by the fiscal module: compared by type only. */
const TYPE_ONLY = new Set(['message', 'last4', 'expiry', 'receiptNumber', 'fiscalSign', 'qrUrl']);
/** Ids, session tokens and secrets: a prefix, then at least 16 random characters. */
const RANDOM = /\b((?:sk_test|sk_live|whsec|[a-z]+)_)[A-Za-z0-9+/=]{16,}/g;
/** A payment link's page (and its QR code): `/l/` and its random 10-character slug. */
const LINK_SLUG = /\/l\/[0-9A-Za-z]{10}\b/g;
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g;
const DAY = /^\d{4}-\d\d-\d\d$/;

/** What must stay the same from one recording to the next: the structure, the types, and the deterministic values. */
function shapeOf(value: unknown, field = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => shapeOf(item));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([name, child]) => [name, shapeOf(child, name)]));
  if (TYPE_ONLY.has(field) || field.endsWith('Ms')) return typeof value;
  if (typeof value !== 'string') return value;
  return DAY.test(value) ? '<day>' : value.replace(TIME, '<time>').replace(RANDOM, '$1<random>').replace(LINK_SLUG, '/l/<random>');
}

let service: TestService;
let fresh: RecordedExamples;
let committed: RecordedExamples;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let document: any;
beforeAll(async () => {
  service = await startService(RECORDING_ENV);
  fresh = await recordApiExamples({ ...service, adminToken: ADMIN_TOKEN });
  committed = JSON.parse(await readFile(EXAMPLES_FILE, 'utf8'));
  document = (await service.admin('GET', '/admin/v1/openapi.json')).body;
}, 120_000);
afterAll(async () => service.stop());

const operations = () =>
  Object.values<Record<string, { operationId: string; responses: Record<string, { description: string; content?: Record<string, unknown> }> }>>(document.paths).flatMap(
    (methods) => Object.values(methods),
  );

describe('the recorded examples', () => {
  it('are what the API answers now, operation by operation: the same fields, types and deterministic values', () => {
    expect(Object.keys(fresh.operations), `operations recorded; ${RECORD}`).toEqual(Object.keys(committed.operations));
    for (const [operationId, example] of Object.entries(fresh.operations)) {
      expect(shapeOf(example), `${operationId} answers otherwise now; ${RECORD}`).toEqual(shapeOf(committed.operations[operationId]));
    }
    expect(shapeOf(fresh.events), `events; ${RECORD}`).toEqual(shapeOf(committed.events));
  });

  it('hold the same refusals, in the same shape', () => {
    expect(shapeOf(fresh.errors), RECORD).toEqual(shapeOf(committed.errors));
  });

  it('catch a renamed field, a changed type and a changed status, and let ids and times differ', () => {
    const order = committed.operations.createOrder!.response as Record<string, unknown>;
    const { customerRef, ...renamed } = order;
    expect(shapeOf({ ...renamed, customerReference: customerRef })).not.toEqual(shapeOf(order));
    expect(shapeOf({ ...order, amount: String(order.amount) })).not.toEqual(shapeOf(order));
    expect(shapeOf({ ...order, status: 'PAID' })).not.toEqual(shapeOf(order));
    expect(shapeOf({ ...order, id: 'ord_0VbfA1b2C3d4E5f6G7h8I9j0', created: '2027-01-02T03:04:05.678Z' })).toEqual(shapeOf(order));
  });

  it('give every operation an example of its success, but the event stream, which is no JSON', () => {
    const described = operations().filter((operation) => operation.operationId !== 'streamEvents');
    expect(Object.keys(committed.operations).sort()).toEqual(described.map((operation) => operation.operationId).sort());
  });

  it('show only refusals the operation declares, each under its status', () => {
    for (const operation of operations()) {
      for (const code of Object.keys(committed.errors[operation.operationId] ?? {}) as ErrorCode[]) {
        const status = String(ERROR_STATUS[code]);
        const answer = operation.responses[status] ?? operation.responses[`${status[0]}XX`];
        expect(answer?.description, `${operation.operationId} answered ${code}, which it does not declare`).toContain(`\`${code}\``);
      }
    }
  });
});
