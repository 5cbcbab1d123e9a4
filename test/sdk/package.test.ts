// @tolov/node and @tolov/cli as a merchant installs them: from their `npm pack` tarballs (and the SDK from the
// repository's folder) into an empty project, then a script of theirs and the tolov command against a running Tolov.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../support/harness.js';
import { json, killAll, processStorage, startMain, type Started } from '../support/process.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const npm = (args: string[], cwd: string) => run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, timeout: 120_000 });

const SCRIPT = `
import Tolov, { TolovError } from '@tolov/node';
import { constructEvent } from '@tolov/node/webhooks';
const tolov = new Tolov(process.env.TOLOV_API_KEY, { baseUrl: process.env.TOLOV_API_BASE });
const order = await tolov.orders.create({ amount: 1500000, description: 'From the tarball' });
const missing = await tolov.orders.retrieve('ord_missing').catch((error) => error);
const ids = [];
for await (const listed of tolov.orders.list({ limit: 1 })) ids.push(listed.id);
console.log(JSON.stringify({ status: order.status, listed: ids.includes(order.id), error: missing instanceof TolovError && missing.code, verify: typeof constructEvent }));
`;

let started: Started;
let key: string;
let work: string;
beforeAll(async () => {
  started = await startMain(await processStorage());
  const product = await json(`${started.url}/admin/v1/products`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Tarball' }),
  });
  key = product.body.keys.test;
  work = await mkdtemp(join(tmpdir(), 'tolov-sdk-'));
}, 120_000);
afterAll(async () => {
  await killAll();
  await rm(work, { recursive: true, force: true });
});

async function project(name: string, install: string): Promise<string> {
  const dir = join(work, name);
  await run('mkdir', ['-p', dir]);
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  await npm(['install', install], dir);
  await writeFile(join(dir, 'script.mjs'), SCRIPT);
  const { stdout } = await run(process.execPath, ['script.mjs'], { cwd: dir, env: { PATH: process.env.PATH, TOLOV_API_KEY: key, TOLOV_API_BASE: started.url } });
  return stdout;
}

describe('@tolov/node', () => {
  it('packs only what a user needs, installs from the tarball into an empty project and works there', async () => {
    await npm(['run', 'build', '--workspace', '@tolov/node'], ROOT);
    const { stdout } = await npm(['pack', '--workspace', '@tolov/node', '--pack-destination', work, '--json'], ROOT);
    const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = packed!.files.map((file) => file.path).sort();
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('dist/webhooks.js');
    expect(files.every((file) => file === 'package.json' || file === 'README.md' || file.startsWith('dist/'))).toBe(true);
    const output = await project('from-tarball', join(work, packed!.filename));
    expect(JSON.parse(output)).toEqual({ status: 'PENDING', listed: true, error: 'NOT_FOUND', verify: 'function' });
    // No dependency came with it.
    expect((await readdir(join(work, 'from-tarball', 'node_modules'))).filter((name) => !name.startsWith('.'))).toEqual(['@tolov']);
  }, 240_000);

  it('installs the CLI from its tarball beside the SDK’s, and its tolov command triggers an event', async () => {
    await npm(['run', 'build', '--workspace', '@tolov/node', '--workspace', '@tolov/cli'], ROOT);
    const { stdout } = await npm(['pack', '--workspace', '@tolov/node', '--workspace', '@tolov/cli', '--pack-destination', work, '--json'], ROOT);
    const packed = JSON.parse(stdout) as Array<{ name: string; filename: string; files: Array<{ path: string }> }>;
    const cli = packed.find((pack) => pack.name === '@tolov/cli')!;
    expect(cli.files.map((file) => file.path).sort()).toEqual(['README.md', 'dist/cli.js', 'dist/listen.js', 'dist/logs.js', 'package.json']);
    const dir = join(work, 'with-cli');
    await run('mkdir', ['-p', dir]);
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'with-cli', private: true }));
    await npm(['install', ...packed.map((pack) => join(work, pack.filename))], dir);
    const env = { PATH: process.env.PATH, TOLOV_API_KEY: key, TOLOV_API_BASE: started.url };
    const triggered = await run(join(dir, 'node_modules/.bin/tolov'), ['trigger', 'order.paid', '--json'], { cwd: dir, env });
    expect(JSON.parse(triggered.stdout)).toMatchObject({ type: 'order.paid', event: expect.stringMatching(/^evt_/) });
    const secret = await run(join(dir, 'node_modules/.bin/tolov'), ['listen', '--print-secret'], { cwd: dir, env });
    expect(secret.stdout.trim()).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  }, 240_000);

  it('installs from the repository folder too', async () => {
    await npm(['run', 'build', '--workspace', '@tolov/node'], ROOT);
    const output = await project('from-folder', join(ROOT, 'packages/node'));
    expect(JSON.parse(output)).toMatchObject({ status: 'PENDING', error: 'NOT_FOUND' });
  }, 240_000);
});
