// @tolov/node and @tolov/cli as a merchant installs them: Tolov started with `npm start` (which builds it and packs
// both) serves their tarballs; the quick start's install lines, run in an empty project with no npm registry, install
// them; a script of the merchant's and `npx tolov` work there, and a SIGTERM to `npx tolov listen` stops it.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, SECRETS_KEY, startService } from '../support/harness.js';
import { json, killAll, processStorage } from '../support/process.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const STARTUP_TIMEOUT_MS = 120_000;
/** Where npm would look for packages: nothing answers there, so an install that needs the registry fails. */
const NO_REGISTRY = 'http://127.0.0.1:9/';

const SCRIPT = `
import Tolov, { TolovError } from '@tolov/node';
import { constructEvent } from '@tolov/node/webhooks';
const tolov = new Tolov(process.env.TOLOV_API_KEY);
const order = await tolov.orders.create({ amount: 1500000, description: 'From the tarball' });
const missing = await tolov.orders.retrieve('ord_missing').catch((error) => error);
const ids = [];
for await (const listed of tolov.orders.list({ limit: 1 })) ids.push(listed.id);
console.log(JSON.stringify({ status: order.status, listed: ids.includes(order.id), error: missing instanceof TolovError && missing.code, verify: typeof constructEvent }));
`;

/** Tolov as the quick start starts it: `npm start` builds the service and packs the SDK and the CLI, then runs it. */
async function npmStart(): Promise<{ child: ChildProcess; url: string }> {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0', LOG_LEVEL: 'info', TOLOV_ADMIN_TOKEN: ADMIN_TOKEN, TOLOV_SECRETS_KEY: SECRETS_KEY, ...(await processStorage()) };
  const child = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  for (let waited = 0; ; waited += 50) {
    const url = /Tolov listening on (http:\/\/\S+)/.exec(output)?.[1];
    if (url) return { child, url };
    if (waited > STARTUP_TIMEOUT_MS || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`npm start: no URL:\n${output}`);
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
}

/** The quick start's install lines: the sh block after the comment that names this file. */
function quickStartInstallLines(): string {
  const text = readFileSync(join(ROOT, 'docs/quickstart.md'), 'utf8');
  const block = /<!--[^>]*test\/sdk\/package\.test\.ts[^>]*-->\n```sh\n([\s\S]*?)^```/m.exec(text)?.[1];
  if (block === undefined) throw new Error('docs/quickstart.md has no sh block after the comment naming test/sdk/package.test.ts');
  return block;
}

/**
 * Running processes whose command line holds `text`, read from /proc. A zombie (exited, not yet reaped by whoever
 * adopted it) is not running, though kill(pid, 0) still finds it: its state is Z and its command line empty.
 */
function processesWith(text: string): Array<{ pid: number; ppid: number }> {
  const found: Array<{ pid: number; ppid: number }> = [];
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (args.includes(text) && state !== 'Z') found.push({ pid: Number(pid), ppid: Number(ppid) });
    } catch {
      // It ended while being read.
    }
  }
  return found;
}

async function until(check: () => boolean, what: string, ms: number): Promise<void> {
  for (let waited = 0; !check(); waited += 50) {
    if (waited > ms) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
}

let started: { child: ChildProcess; url: string };
let work: string;
let project: string;
/** A merchant's shell in the project: their key and Tolov's address, npm with no registry and a cache of its own. */
let env: Record<string, string>;
let installed: { stdout: string; stderr: string };
beforeAll(async () => {
  started = await npmStart();
  const product = await json(`${started.url}/admin/v1/products`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Tarball' }),
  });
  work = await mkdtemp(join(tmpdir(), 'tolov-sdk-'));
  project = join(work, 'shop');
  await mkdir(project);
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'shop', private: true, type: 'module' }));
  env = {
    PATH: process.env.PATH!,
    HOME: work,
    TOLOV_API_KEY: product.body.keys.test,
    TOLOV_API_BASE: started.url,
    npm_config_registry: NO_REGISTRY,
    npm_config_fetch_retries: '0',
    npm_config_cache: join(work, 'npm-cache'),
    npm_config_update_notifier: 'false',
  };
  const lines = quickStartInstallLines().replaceAll('http://127.0.0.1:4000', started.url);
  installed = await run('bash', ['-e', '-c', lines], { cwd: project, env, timeout: 120_000 });
}, 300_000);
afterAll(async () => {
  // npm start runs the service with exec: npm passes the SIGTERM to it, and it stops as it does in production.
  if (started?.child.exitCode === null) {
    started.child.kill('SIGTERM');
    await new Promise((resolveExit) => started.child.once('exit', resolveExit));
  }
  await killAll();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the SDK and the CLI served by Tolov', () => {
  it('serves each tarball to anyone, as gzip, revalidated by its ETag', async () => {
    for (const name of ['tolov-node.tgz', 'tolov-cli.tgz']) {
      const response = await fetch(`${started.url}/sdk/${name}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/gzip');
      expect(response.headers.get('cache-control')).toBe('public, no-cache');
      const body = Buffer.from(await response.arrayBuffer());
      expect(body.equals(await readFile(join(ROOT, 'dist/sdk', name)))).toBe(true);
      const etag = response.headers.get('etag')!;
      expect(etag).toMatch(/^"[\w-]{43}"$/);
      const again = await fetch(`${started.url}/sdk/${name}`, { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
      expect(again.headers.get('etag')).toBe(etag);
      expect((await fetch(`${started.url}/sdk/${name}`, { headers: { 'if-none-match': '"older"' } })).status).toBe(200);
    }
  });

  it('packs only what a merchant needs: the built code, its README, a package.json with no scripts', async () => {
    const packed = async (name: string) => (await run('tar', ['-tzf', join(ROOT, 'dist/sdk', name)])).stdout.trim().split('\n').sort();
    const sdk = await packed('tolov-node.tgz');
    expect(sdk).toEqual(expect.arrayContaining(['package/dist/index.js', 'package/dist/index.d.ts', 'package/dist/webhooks.js', 'package/dist/webhooks.d.ts']));
    expect(sdk.every((file) => ['package/package.json', 'package/README.md'].includes(file) || file.startsWith('package/dist/'))).toBe(true);
    expect(await packed('tolov-cli.tgz')).toEqual([
      'package/README.md',
      'package/dist/cli.js',
      'package/dist/listen.js',
      'package/dist/logs.js',
      'package/dist/payment-links.js',
      'package/dist/payouts.js',
      'package/dist/usage.js',
      'package/package.json',
    ]);
    // A tarball has no sources to build: a prepare script would only be listed to the merchant as one to review.
    const manifest = JSON.parse(await readFile(join(project, 'node_modules/@tolov/cli/package.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: '@tolov/cli', dependencies: { '@tolov/node': '0.1.0' } });
    expect(manifest.scripts).toBeUndefined();
  });

  it('answers 404 in the API’s error format when it runs from its sources, which hold no tarballs', async () => {
    const service = await startService();
    try {
      const reply = await service.call({ method: 'GET', url: '/sdk/tolov-node.tgz' });
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({ statusCode: 404, code: 'NOT_FOUND', message: expect.stringContaining('npm run build'), requestId: expect.stringMatching(/^req_/) });
      expect((await service.call({ method: 'GET', url: '/openapi.json' })).text).not.toContain('/sdk/');
    } finally {
      await service.stop();
    }
  });
});

describe('the quick start’s install lines, in an empty project with no npm registry', () => {
  it('install the SDK and the CLI from Tolov, and nothing else', async () => {
    const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8'));
    expect(manifest.dependencies).toEqual({ '@tolov/node': `${started.url}/sdk/tolov-node.tgz` });
    expect(manifest.devDependencies).toEqual({ '@tolov/cli': `${started.url}/sdk/tolov-cli.tgz` });
    expect((await readdir(join(project, 'node_modules'))).filter((name) => !name.startsWith('.'))).toEqual(['@tolov']);
    expect(installed.stderr).not.toMatch(/install.scripts/i);
  });

  it('give a project whose script uses the SDK', async () => {
    await writeFile(join(project, 'script.mjs'), SCRIPT);
    const { stdout } = await run(process.execPath, ['script.mjs'], { cwd: project, env });
    expect(JSON.parse(stdout)).toEqual({ status: 'PENDING', listed: true, error: 'NOT_FOUND', verify: 'function' });
  });

  it('give a project where npx tolov triggers an event and prints the listen secret', async () => {
    const triggered = await run('npx', ['tolov', 'trigger', 'order.paid', '--json'], { cwd: project, env });
    expect(JSON.parse(triggered.stdout)).toMatchObject({ type: 'order.paid', event: expect.stringMatching(/^evt_/) });
    const secret = await run('npx', ['tolov', 'listen', '--print-secret'], { cwd: project, env });
    expect(secret.stdout.trim()).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  }, 60_000);

  it('give a project where a SIGTERM to `npx tolov listen` leaves no tolov process running', async () => {
    // npx runs the command through `sh -c`: npx, the shell and node each carry this address on their command line.
    const forwardTo = `http://127.0.0.1:9/hooks-${process.pid}-${Date.now()}`;
    const npx = spawn('npx', ['tolov', 'listen', '--forward-to', forwardTo], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    npx.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npx.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise((resolveExit) => npx.once('exit', resolveExit));
    try {
      await until(() => output.includes('Ready! Forwarding'), `tolov listen to be ready: ${output}`, 30_000);
      const listening = processesWith(forwardTo);
      // Beside npx itself, the node process that listens: not npx's child but its grandchild, under the shell.
      const node = listening.filter(({ pid, ppid }) => pid !== npx.pid && ppid !== npx.pid);
      expect(node, JSON.stringify(listening)).toHaveLength(1);

      npx.kill('SIGTERM');
      await exited;
      await until(() => processesWith(forwardTo).length === 0, `no process of ${forwardTo}: ${JSON.stringify(processesWith(forwardTo))}`, 5_000);
    } finally {
      for (const { pid } of processesWith(forwardTo)) process.kill(pid, 'SIGKILL');
    }
  }, 60_000);
});

describe('the packages installed from the repository’s folders', () => {
  it('build their dist/ as they install (their prepare script)', async () => {
    const built = join(ROOT, 'packages/node/dist/index.js');
    const before = (await stat(built)).mtimeMs;
    const dir = join(work, 'from-folder');
    await mkdir(dir);
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'from-folder', private: true, type: 'module' }));
    await run('npm', ['install', join(ROOT, 'packages/node'), '--no-audit', '--no-fund'], { cwd: dir, env, timeout: 120_000 });
    expect((await stat(built)).mtimeMs).toBeGreaterThan(before);
    await writeFile(join(dir, 'script.mjs'), SCRIPT);
    const { stdout } = await run(process.execPath, ['script.mjs'], { cwd: dir, env });
    expect(JSON.parse(stdout)).toMatchObject({ status: 'PENDING', error: 'NOT_FOUND' });
  }, 120_000);
});
