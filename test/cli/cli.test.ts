// The `tolov` command as a developer runs it from the repository (npm run tolov --): every event caused in test mode,
// receipts' included (their events come from the fiscalization worker, run here as the service runs it), events
// listed and resent, and refusals that say what to do.
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Merchant, type TestService } from '../support/harness.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');

/** The fiscalization worker's interval in the service. */
const FISCALIZATION_INTERVAL_MS = 500;

let service: TestService;
let merchant: Merchant;
let base: string;
let fiscalization: NodeJS.Timeout;
/** The worker's batches, one after the other; the last is awaited before the service stops. */
let fiscalizing: Promise<unknown> = Promise.resolve();
beforeAll(async () => {
  service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
  merchant = await service.createMerchant();
  base = await service.app.listen({ port: 0, host: '127.0.0.1' });
  // The harness runs no workers; this one registers receipts as the service's does.
  fiscalization = setInterval(() => (fiscalizing = fiscalizing.then(() => service.receipts.fiscalizeDue(32))), FISCALIZATION_INTERVAL_MS);
});
afterAll(async () => {
  clearInterval(fiscalization);
  await fiscalizing;
  await service.stop();
});

async function tolov(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'packages/cli/src/cli.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, TOLOV_API_KEY: merchant.test, TOLOV_API_BASE: base, ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('tolov', () => {
  it('triggers each of the seven events in test mode, failures included', async () => {
    const expected: Record<string, Record<string, unknown>> = {
      'order.paid': { status: 'paid' },
      'order.failed': { status: 'failed', failureCode: 'INSUFFICIENT_FUNDS' },
      'order.expired': { status: 'expired' },
      'payment_intent.succeeded': { status: 'succeeded' },
      'payment_intent.failed': { status: 'failed', failureCode: 'INSUFFICIENT_FUNDS' },
      'receipt.fiscalized': { object: 'receipt', type: 'sale', status: 'fiscalized', terminalId: expect.stringMatching(/^TEST/), failureCode: null },
      'receipt.failed': { object: 'receipt', type: 'sale', status: 'failed', failureCode: 'INVALID_CODE', terminalId: null },
    };
    for (const [type, data] of Object.entries(expected)) {
      const result = await tolov(['trigger', type, '--json']);
      expect(result.code, result.stderr).toBe(0);
      const printed = JSON.parse(result.stdout);
      expect(printed.type).toBe(type);
      const event = await service.call({ method: 'GET', url: `/v1/events/${printed.event}`, key: merchant.test });
      expect(event.body.type).toBe(type);
      expect(event.body.data.id).toBe(printed.object);
      const status = String(event.body.data.status).toLowerCase();
      expect({ ...event.body.data, status }).toMatchObject(data);
    }
  }, 120_000);

  it('lists and resends events', async () => {
    const triggered = JSON.parse((await tolov(['trigger', 'order.expired', '--json'])).stdout);
    const listed = await tolov(['events', 'list', '--type', 'order.expired', '--limit', '1']);
    expect(listed.stdout).toContain(`${triggered.event}  order.expired`);
    const endpoint = await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: merchant.test, body: { url: 'http://127.0.0.1:9/cli' } });
    const resent = await tolov(['events', 'resend', triggered.event, '--endpoint', endpoint.body.id]);
    expect(resent.code, resent.stderr).toBe(0);
    expect(resent.stdout).toMatch(new RegExp(`^wd_\\w+: order\\.expired ${triggered.event} to ${endpoint.body.id}, pending`));
  }, 60_000);

  it('says what to do when it cannot', async () => {
    expect(await tolov(['trigger', 'order.paid'], { TOLOV_API_KEY: '' })).toMatchObject({ code: 2, stderr: 'tolov: no API key: set TOLOV_API_KEY or pass --api-key sk_test_…\n' });
    expect(await tolov(['trigger', 'order.paid', '--api-key', merchant.live])).toMatchObject({ code: 2, stderr: expect.stringContaining('test mode only') });
    expect(await tolov(['trigger', 'refund.made'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('tolov trigger takes one of: order.paid, order.failed, order.expired, payment_intent.succeeded, payment_intent.failed, receipt.fiscalized, receipt.failed'),
    });
    expect(await tolov(['events', 'resend', 'evt_missing', '--endpoint', 'we_missing'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/^tolov: NOT_FOUND: No such event \(req_\w+\)/) });
    expect(await tolov(['trigger', 'order.paid', '--api-base', 'http://127.0.0.1:9'])).toMatchObject({ code: 1, stderr: expect.stringContaining('no answer from http://127.0.0.1:9') });
    expect((await tolov(['--version'])).stdout).toBe('0.1.0\n');
    expect((await tolov(['--help'])).stdout).toMatch(/receipt\.fiscalized\s+\(an order paid with fiscal lines\), receipt\.failed/);
  }, 120_000);
});
