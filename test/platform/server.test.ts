import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, engine } from '../support/harness.js';
import { json, killAll, processStorage, startMain } from '../support/process.js';

afterAll(killAll);

/** A test that starts the service on a fresh data folder two or three times, each start initialising or opening it. */
const RESTARTS_TIMEOUT_MS = 120_000;

describe('the service process', () => {
  it('starts, prints its URL, serves the quick start, and stops cleanly on SIGTERM', async () => {
    const { child, url, output, exited } = await startMain(await processStorage());
    expect((await json(`${url}/healthz`)).body).toEqual({ status: 'ok' });

    const product = await json(`${url}/admin/v1/products`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Quick start shop' }),
    });
    expect(product.status).toBe(201);
    const key = product.body.keys.test as string;
    const order = await json(`${url}/merchant/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'quick-start-1' },
      body: JSON.stringify({ amount: 150_000, description: 'Test order', returnUrl: 'https://example.uz/thanks' }),
    });
    expect(order.status).toBe(201);
    const list = await json(`${url}/merchant/v1/orders`, { headers: { authorization: `Bearer ${key}` } });
    expect(list.body.data.map((o: { id: string }) => o.id)).toEqual([order.body.id]);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output()).toContain('SIGTERM: finishing requests in flight');
    // Logs never carry the secrets that went through the requests.
    expect(output()).not.toContain(key);
    expect(output()).not.toContain(ADMIN_TOKEN);
    expect(output()).not.toContain(order.body.paymentUrl.split('/pay/')[1]);
  });

  it.runIf(engine === 'pglite')('keeps its data in TOLOV_DATA_DIR across restarts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tolov-data-'));
    try {
      const first = await startMain({ TOLOV_DATA_DIR: dir });
      const product = await json(`${first.url}/admin/v1/products`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Persistent shop' }),
      });
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);

      const second = await startMain({ TOLOV_DATA_DIR: dir });
      const balance = await json(`${second.url}/v1/balance`, { headers: { authorization: `Bearer ${product.body.keys.test}` } });
      expect(balance.status).toBe(200);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, RESTARTS_TIMEOUT_MS);

  it.runIf(engine === 'pglite')('refuses a data folder another process has open, and takes over that of a killed one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tolov-data-'));
    try {
      const first = await startMain({ TOLOV_DATA_DIR: dir });
      // Two engines writing the same files would corrupt them.
      await expect(startMain({ TOLOV_DATA_DIR: dir })).rejects.toThrow(
        new RegExp(`exited with 1[\\s\\S]*in use by process ${first.child.pid}; only one process may open it at a time`),
      );
      expect((await json(`${first.url}/healthz`)).status).toBe(200);
      first.child.kill('SIGKILL');
      await first.exited;
      const second = await startMain({ TOLOV_DATA_DIR: dir });
      expect((await json(`${second.url}/healthz`)).status).toBe(200);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, RESTARTS_TIMEOUT_MS);

  it.runIf(engine === 'pglite')('stops with npm start when npm is stopped, leaving no service process behind', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const npm = spawn('npm', ['start', '--silent'], {
        env: { ...process.env, PORT: '0', TOLOV_DATA_DIR: 'memory://', LOG_LEVEL: 'info', TOLOV_ADMIN_TOKEN: ADMIN_TOKEN },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      npm.stdout.on('data', (chunk) => (output += chunk));
      const npmExited = new Promise((resolve) => npm.once('exit', resolve));
      for (let waited = 0; !output.includes('Tolov listening on') && waited < 60_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
      const servicePid = Number(/"pid":(\d+)/.exec(output)?.[1]);
      expect(servicePid).toBeGreaterThan(0);
      npm.kill(signal);
      await npmExited;
      const alive = () => {
        try {
          process.kill(servicePid, 0);
          return true;
        } catch {
          return false;
        }
      };
      for (let waited = 0; alive() && waited < 10_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
      expect({ signal, serviceAlive: alive() }).toEqual({ signal, serviceAlive: false });
    }
  }, 150_000);

  it('refuses to start with a bad setting, naming the variable', async () => {
    await expect(startMain({ TOLOV_DATA_DIR: 'memory://', TOLOV_ORDER_TTL_SECONDS: 'soon' })).rejects.toThrow(
      /exited with 1[\s\S]*TOLOV_ORDER_TTL_SECONDS="soon" is invalid: expected an integer/,
    );
  });
});
