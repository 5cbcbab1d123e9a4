// The commands that follow the service as a developer runs them. `tolov listen`: events forwarded to a local receiver,
// signed with a secret stable per key and verified there by the SDK; after the connection drops, the events made
// meanwhile arrive, in order, once each. `tolov logs tail`: the API calls as they are made.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, connect, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { constructEvent, type TolovEvent } from '@tolov/node';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';

const ROOT = resolve(import.meta.dirname, '../..');

let service: TestService;
let merchant: Merchant;
let base: string;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant();
  base = await service.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => service.stop());

const portOf = (server: Server | ReturnType<typeof createTcpServer>) => (server.address() as { port: number }).port;

/** A receiver that verifies each delivery with the SDK, as a merchant's would. */
async function receiver(secret: string) {
  const received: TolovEvent[] = [];
  const refused: string[] = [];
  const server = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        received.push(constructEvent(Buffer.concat(chunks), request.headers, secret));
        response.writeHead(200).end('ok');
      } catch (error) {
        refused.push((error as Error).message);
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { received, refused, url: `http://127.0.0.1:${portOf(server)}/webhooks`, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** A TCP hop between the CLI and the service, whose connections the test can cut. */
async function cuttableHop(target: string) {
  const { port } = new URL(target);
  const sockets = new Set<Socket>();
  const server = createTcpServer((client) => {
    const upstream = connect(Number(port), '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${portOf(server)}`,
    cut: () => sockets.forEach((socket) => socket.destroy()),
    close: () => new Promise((resolve) => (sockets.forEach((socket) => socket.destroy()), server.close(resolve))),
  };
}

function runCli(args: string[], apiBase = base): { child: ChildProcessWithoutNullStreams; output: () => string; waitFor: (text: string | RegExp) => Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'packages/cli/src/cli.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, TOLOV_API_KEY: merchant.test, TOLOV_API_BASE: apiBase },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const waitFor = async (text: string | RegExp) => {
    for (let waited = 0; !(typeof text === 'string' ? stdout.includes(text) : text.test(stdout)); waited += 20) {
      if (waited > 30_000 || child.exitCode !== null) throw new Error(`no ${text} in: ${stdout}\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { child, output: () => stdout, waitFor };
}

/** A command run to its end. */
async function cliRun(args: string[], key = merchant.test): Promise<{ code: unknown; stdout: string; stderr: string }> {
  const cli = spawn(process.execPath, ['--import', 'tsx', 'packages/cli/src/cli.ts', ...args], { cwd: ROOT, env: { PATH: process.env.PATH, TOLOV_API_KEY: key, TOLOV_API_BASE: base } });
  let stdout = '';
  let stderr = '';
  cli.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  cli.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise((resolve) => cli.on('close', resolve));
  return { code, stdout, stderr };
}

async function cliOutput(args: string[], key = merchant.test): Promise<string> {
  const { code, stdout, stderr } = await cliRun(args, key);
  expect(code, stderr).toBe(0);
  return stdout.trim();
}

async function newOrder(action: 'pay' | 'expire'): Promise<string> {
  const order = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: idem(), body: { amount: 2_000_000, description: 'Listen test' } });
  const done = await service.call({ method: 'POST', url: `/v1/test_helpers/orders/${order.body.id}/${action}`, key: merchant.test, body: {} });
  expect(done.status, done.text).toBe(200);
  return order.body.id;
}

const waitUntil = async (check: () => boolean) => {
  for (let waited = 0; !check(); waited += 20) {
    if (waited > 30_000) throw new Error('waited 30 s in vain');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe('tolov listen', () => {
  it('prints a signing secret that stays the same for a key, and differs between keys', async () => {
    const secret = await cliOutput(['listen', '--print-secret']);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(await cliOutput(['listen', '--print-secret'])).toBe(secret);
    expect(await cliOutput(['listen', '--print-secret'], merchant.live)).not.toBe(secret);
  });

  it('forwards events as they happen, signed so the SDK verifies them, and resumes after a lost connection', async () => {
    const secret = await cliOutput(['listen', '--print-secret']);
    const hook = await receiver(secret);
    const hop = await cuttableHop(base);
    const cli = runCli(['listen', '--forward-to', hook.url, '--events', 'order.paid,order.expired'], hop.url);
    try {
      await cli.waitFor(`Ready! Forwarding test events to ${hook.url}. Your webhook signing secret is ${secret}`);
      const first = await newOrder('pay');
      await waitUntil(() => hook.received.length === 1);
      await cli.waitFor(/<-- \[200\] POST \S+ \[evt_\w+\]/);

      hop.cut();
      await cli.waitFor('connection lost');
      const meanwhile = [await newOrder('expire'), await newOrder('pay'), await newOrder('pay')];
      await cli.waitFor('reconnected, resuming after the last event seen');
      await waitUntil(() => hook.received.length === 4);
      const after = await newOrder('expire');
      await waitUntil(() => hook.received.length === 5);

      expect(hook.refused).toEqual([]);
      expect(hook.received.map((event) => (event.data as { id: string }).id)).toEqual([first, ...meanwhile, after]);
      expect(hook.received.map((event) => event.type)).toEqual(['order.paid', 'order.expired', 'order.paid', 'order.paid', 'order.expired']);
      expect(new Set(hook.received.map((event) => event.id)).size).toBe(5);
    } finally {
      cli.child.kill('SIGINT');
      await new Promise((resolve) => cli.child.on('close', resolve));
      await hop.close();
      await hook.close();
    }
    expect(cli.child.exitCode).toBe(0);
  });

  it('says what is wrong with a bad event type or a missing --forward-to', async () => {
    const bad = await cliRun(['listen', '--forward-to', 'http://127.0.0.1:9/x', '--events', 'order.shipped']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('tolov: VALIDATION_ERROR: types has "order.shipped"');
    const missing = await cliRun(['listen']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('tolov listen --forward-to http://localhost:3000/webhooks');
  });
});

describe('tolov logs tail', () => {
  it('prints the latest calls, then each new one as it is made, oldest first, until Ctrl-C', async () => {
    const before = await service.call({ method: 'GET', url: '/v1/balance', key: merchant.test });
    const cli = runCli(['logs', 'tail', '--json']);
    try {
      await cli.waitFor(before.headers['request-id'] as string);
      const made = [
        await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: 'tail-order-1', body: { amount: 100 } }),
        await service.call({ method: 'GET', url: '/merchant/v1/orders/ord_nothing', key: merchant.test }),
      ];
      await cli.waitFor(made[1]!.headers['request-id'] as string);
      const lines = cli.output().trim().split('\n').map((line) => JSON.parse(line) as { id: string; path: string; status: number; idempotencyKey: string | null });
      const ids = lines.map((line) => line.id);
      expect(ids.indexOf(made[0]!.headers['request-id'] as string)).toBe(ids.indexOf(before.headers['request-id'] as string) + 1);
      expect(lines.at(-2)).toMatchObject({ path: '/merchant/v1/orders', status: 201, idempotencyKey: 'tail-order-1' });
      expect(lines.at(-1)).toMatchObject({ path: '/merchant/v1/orders/ord_nothing', status: 404 });
      expect(new Set(ids).size).toBe(ids.length);
      expect(lines.some((line) => line.path.startsWith('/v1/request_logs'))).toBe(false);
    } finally {
      cli.child.kill('SIGINT');
      await new Promise((resolve) => cli.child.on('close', resolve));
    }
    expect(cli.child.exitCode).toBe(0);
  });
});
