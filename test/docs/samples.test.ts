// Every code sample of the docs, run against Tolov as a reader would run it:
// - JavaScript programs (each named by its first line, `// name.mjs`): scripts run to their end; webhook receivers are
//   sent a delivery signed as Tolov signs one, which they must accept and act on, and a forged one, which they must
//   refuse; a Next.js route handler is called as Next.js calls it;
// - shell blocks that call the API (curl, the tolov CLI), with the placeholders (`ord_…`, `card_…`) replaced by real
//   objects; a block that keeps running (`tolov listen --forward-to`) runs beside the blocks after it;
// - JSON examples of answers, whose fields must all exist in the API's schemas.
// Shell blocks that install or start things (npm ci, npm start, the bank simulator) are what `.ci/run` itself does.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedHeaders } from '@tolov/node';
import { listenSecret } from '../../packages/cli/src/listen.js';
import { bindCard } from '../support/binding.js';
import { ADMIN_TOKEN, idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';
import { setPayoutAccount } from '../support/payouts.js';
import { logoPng } from '../support/png.js';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`), 'packages/node/README.md', 'packages/cli/README.md'];
/** What a reader is told they will see, beyond each sample succeeding. */
const EXPECTED_OUTPUT: Record<string, RegExp> = { 'docs/quickstart.md': /paid: ord_\w+, ship it/ };
const SCHEMA_OF_OBJECT: Record<string, string> = {
  order: 'Order',
  payment_link: 'PaymentLink',
  payment_intent: 'PaymentIntent',
  refund: 'Refund',
  card: 'Card',
  card_binding: 'CardBinding',
  event: 'Event',
  checkout_session: 'SessionState',
  reconciliation_report: 'ReconciliationReport',
  webhook_endpoint: 'WebhookEndpoint',
  receipt: 'Receipt',
  balance_transaction: 'BalanceTransaction',
  payout_account: 'PayoutAccount',
  payout: 'Payout',
  check: 'Check',
  activation: 'Activation',
  balance: 'Balance',
};

interface Block {
  lang: string;
  code: string;
  line: number;
}

function blocksOf(doc: string): Block[] {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  return [...text.matchAll(/^```(\w+)[^\n]*\n([\s\S]*?)^```/gm)].map((match) => ({
    lang: match[1]!,
    code: match[2]!,
    line: text.slice(0, match.index).split('\n').length,
  }));
}

const callsTheApi = (block: Block) => block.lang === 'sh' && /(^|[\s;(])(curl|tolov|npx tolov) /m.test(block.code);
const runnable = (doc: string) => blocksOf(doc).some((block) => block.lang === 'js' || block.lang === 'json' || callsTheApi(block));

let service: TestService;
let base: string;
let binDir: string;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let schemas: Record<string, any>;
beforeAll(async () => {
  service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
  base = await service.app.listen({ port: 0, host: '127.0.0.1' });
  // The operator's description: the docs show the operator's objects too (a reconciliation report).
  schemas = (await service.admin('GET', '/admin/v1/openapi.json')).body.components.schemas;
  // Samples import @tolov/node as a reader's project would: the package as built.
  await run('npm', ['run', 'build', '--workspace', '@tolov/node'], { cwd: ROOT });
  binDir = await mkdtemp(join(ROOT, 'test/artifacts/samples-bin-'));
  await writeFile(join(binDir, 'tolov'), `#!/bin/sh\nexec "${process.execPath}" --import tsx "${ROOT}/packages/cli/src/cli.ts" "$@"\n`);
  await chmod(join(binDir, 'tolov'), 0o755);
}, 120_000);
afterAll(async () => {
  await rm(binDir, { recursive: true, force: true });
  await service.stop();
});

const freePort = () =>
  new Promise<number>((resolvePort) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });

/**
 * A merchant with one of each object the samples name by placeholder: its charge settled, a test payout account (one
 * the test bank pays) and a payout still PENDING, which a sample may cancel.
 */
async function seeded(merchant: Merchant): Promise<Record<string, string>> {
  const key = merchant.test;
  const order = await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 1_500_000 } });
  const card = await bindCard(service, key, '8600000000000007');
  const intent = await charge(service, key, { amount: 9_900_000, card });
  const endpoint = await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key, body: { url: 'http://127.0.0.1:9/hooks' } });
  const event = await service.call({ method: 'GET', url: '/v1/events?limit=1', key });
  await service.call({ method: 'POST', url: '/v1/test_helpers/balance/settle', key });
  await setPayoutAccount(service, merchant.productId);
  const payout = await service.call({ method: 'POST', url: '/v1/payouts', key, idempotencyKey: idem(), body: { amount: 100_000 } });
  return {
    'ord_…': order.body.id,
    'card_…': card,
    'pi_…': intent.body.id,
    'we_…': endpoint.body.id,
    'evt_…': event.body.data[0].id,
    'po_…': payout.body.id,
    'sk_test_…': key,
  };
}

/** A real order.paid event of the merchant's, as a delivery's body. */
async function paidEvent(key: string): Promise<{ body: string; orderId: string }> {
  const order = await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 2_500_000 } });
  await service.call({ method: 'POST', url: `/v1/test_helpers/orders/${order.body.id}/pay`, key, body: {} });
  const events = await service.call({ method: 'GET', url: '/v1/events?type=order.paid&limit=1', key });
  return { body: JSON.stringify(events.body.data[0]), orderId: order.body.id };
}

interface Context {
  doc: string;
  dir: string;
  port: number;
  env: Record<string, string>;
  placeholders: Record<string, string>;
  secret: string;
  key: string;
  background: Array<{ child: ChildProcess; output: () => string; receiver: boolean }>;
}

function substituted(code: string, context: Context): string {
  let text = code.replaceAll('http://127.0.0.1:4000', base).replaceAll('localhost:3000', `127.0.0.1:${context.port}`).replaceAll('npx tolov', 'tolov');
  for (const [placeholder, value] of Object.entries(context.placeholders)) text = text.replaceAll(placeholder, value);
  return text;
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  for (let waited = 0; !(await check()); waited += 50) {
    if (waited > ms) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
}

async function runShell(block: Block, context: Context): Promise<void> {
  const code = substituted(block.code, context);
  if (/listen --forward-to/.test(code)) {
    const child = spawn('bash', ['-c', code], { cwd: context.dir, env: context.env, detached: true });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    context.background.push({ child, output: () => output, receiver: /^node \S+\.mjs &$/m.test(code) });
    await until(() => output.includes('Ready! Forwarding'), `tolov listen to be ready: ${output}`);
    return;
  }
  const result = await run('bash', ['-e', '-o', 'pipefail', '-c', code], { cwd: context.dir, env: context.env, timeout: 60_000 }).catch(
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
  const exit = 'code' in result ? result.code : 0;
  // A stream read for a bounded time (curl --max-time) ends with curl's timeout status.
  expect([0, ...(code.includes('--max-time') ? [28] : [])], `exit ${exit}: ${result.stdout}${result.stderr}`).toContain(exit);
  expect(result.stdout, result.stdout).not.toMatch(/"statusCode":\s*[45]\d\d/);
}

async function runJavaScript(block: Block, context: Context): Promise<void> {
  const name = /^\/\/ ([\w-]+\.mjs)\n/.exec(block.code)?.[1];
  expect(name, 'a JavaScript sample starts with its file name: // name.mjs').toBeDefined();
  const file = join(context.dir, name!);
  await writeFile(file, block.code);
  if (/export async function POST/.test(block.code)) return callRouteHandler(file, context);
  if (/\.listen\(/.test(block.code)) return runReceiver(file, context);
  const result = await run(process.execPath, [file], { cwd: context.dir, env: context.env, timeout: 60_000 });
  expect(result.stdout.trim().length, result.stderr).toBeGreaterThan(0);
}

/** A receiver accepts a delivery signed as Tolov signs one and acts on it, and refuses a forged one. */
async function runReceiver(file: string, context: Context): Promise<void> {
  const child = spawn(process.execPath, [file], { cwd: context.dir, env: context.env });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    const url = `http://127.0.0.1:${context.port}/tolov/webhooks`;
    const { body, orderId } = await paidEvent(context.key);
    const post = (payload: string, headers: Record<string, string>) => fetch(url, { method: 'POST', headers, body: payload }).then((response) => response.status).catch(() => 0);
    const signed = signedHeaders(body, context.secret);
    await until(async () => (await post(body, signed)) === 200, `${file} to accept a signed delivery: ${output}`);
    await until(() => output.includes(orderId), `${file} to act on ${orderId}: ${output}`);
    expect(await post(body.replace('"livemode":false', '"livemode": false'), signed)).toBe(400);
    expect(await post(body, signedHeaders(body, 'whsec_b3RoZXItc2VjcmV0LW90aGVyLXNlY3JldC0wMTIzNDU2Nzg5'))).toBe(400);
  } finally {
    child.kill();
    await new Promise((resolveExit) => child.once('exit', resolveExit));
  }
}

/** A Next.js route handler, called with a Web Request as Next.js calls it (in a process of its own, as a reader's). */
async function callRouteHandler(file: string, context: Context): Promise<void> {
  const { body } = await paidEvent(context.key);
  const caller = `
    const { POST } = await import(${JSON.stringify(pathToFileURL(file).href)});
    const call = (payload) => POST(new Request('http://127.0.0.1/tolov/webhooks', { method: 'POST', headers: JSON.parse(process.env.HEADERS), body: payload }));
    console.log(JSON.stringify([(await call(process.env.BODY)).status, (await call(process.env.BODY + ' ')).status]));`;
  const env = { ...context.env, BODY: body, HEADERS: JSON.stringify(signedHeaders(body, context.secret)) };
  const result = await run(process.execPath, ['--input-type=module', '-e', caller], { cwd: context.dir, env, timeout: 30_000 });
  // Accepted when signed, refused once the body changed.
  expect(JSON.parse(result.stdout.trim().split('\n').at(-1)!)).toEqual([200, 400]);
}

/** An example answer: every field it shows is a field of its schema; a list's items are each checked so. */
function checkExample(block: Block): void {
  const example = JSON.parse(block.code.replace(/,\s*…/g, '')) as Record<string, unknown>;
  if (example.object === 'list') {
    expect(Object.keys(example).sort(), `a list at line ${block.line}`).toEqual(['data', 'has_more', 'object']);
    for (const item of example.data as Record<string, unknown>[]) checkFields(item, block.line);
    return;
  }
  checkFields(example, block.line);
}

function checkFields(example: Record<string, unknown>, line: number): void {
  const name = typeof example.object === 'string' ? SCHEMA_OF_OBJECT[example.object] : 'statusCode' in example ? 'Error' : undefined;
  expect(name, `no schema for the example at line ${line}`).toBeDefined();
  const declared = Object.keys(schemas[name!].properties);
  expect(Object.keys(example).filter((field) => !declared.includes(field)), `${name} at line ${line}`).toEqual([]);
}

describe('the docs’ samples', () => {
  it.each(DOCS.filter(runnable))('%s', async (doc) => {
    const merchant = await service.createMerchant({ name: 'Chorsu Market' });
    const dir = await mkdtemp(join(ROOT, 'test/artifacts/samples-'));
    await mkdir(dir, { recursive: true });
    // The image the branding sample uploads.
    await writeFile(join(dir, 'logo.png'), logoPng([124, 45, 18]));
    const port = await freePort();
    const secret = listenSecret(merchant.test);
    const context: Context = {
      doc,
      dir,
      port,
      secret,
      key: merchant.test,
      placeholders: await seeded(merchant),
      env: {
        PATH: `${binDir}:${process.env.PATH}`,
        HOME: process.env.HOME ?? dir,
        TOLOV_API_KEY: merchant.test,
        TOLOV_API_BASE: base,
        KEY: merchant.test,
        TOLOV_ADMIN_TOKEN: ADMIN_TOKEN,
        PRODUCT_ID: merchant.productId,
        TOLOV_WEBHOOK_SECRET: secret,
        PORT: String(port),
      },
      background: [],
    };
    try {
      for (const block of blocksOf(doc)) {
        if (block.lang === 'js') await runJavaScript(block, context);
        else if (block.lang === 'json') checkExample(block);
        else if (callsTheApi(block)) await runShell(block, context);
      }
      for (const { output, receiver } of context.background) {
        // Each event was forwarded; where the block started a receiver, each was answered 200: it verified the signature.
        const answered = receiver ? /<-- \[200\]/g : /<-- /g;
        await until(() => (output().match(answered) ?? []).length === (output().match(/--> /g) ?? []).length, `every forward to be answered: ${output()}`);
        if (EXPECTED_OUTPUT[doc]) await until(() => EXPECTED_OUTPUT[doc]!.test(output()), `${EXPECTED_OUTPUT[doc]}: ${output()}`);
      }
    } finally {
      for (const { child } of context.background) process.kill(-child.pid!, 'SIGTERM');
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
