import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindLiveCard, liveCharge, SIM_SECRET, startLive, type Live } from '../support/live.js';

let live: Live;
beforeAll(async () => {
  live = await startLive();
});
afterAll(() => live.stop());

const today = () => new Date().toISOString().slice(0, 10);

describe('the reconciliation report', () => {
  it('lists every mismatch between Tolov and the bank', async () => {
    const card = await bindLiveCard(live, '8600000000000007');
    const lost = (await liveCharge(live, card, 5_000)).body;
    const skewed = (await liveCharge(live, card, 6_000)).body;
    const clean = (await liveCharge(live, card, 7_000)).body;
    // The bank "forgets" one debit, records another with a different amount, and has one Tolov never heard of.
    await live.sim.db.query('DELETE FROM sim_operations WHERE operation_id = $1', [lost.id]);
    await live.sim.db.query('UPDATE sim_operations SET amount = 6_001 WHERE operation_id = $1', [skewed.id]);
    await live.sim.db.query(
      `INSERT INTO sim_operations (operation_id, type, token, amount, status) VALUES ('pi_stranger', 'debit', 'bk_x', 900, 'SUCCEEDED')`,
    );
    const report = await live.service.admin('GET', `/admin/v1/reconciliation?date=${today()}`);
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({ object: 'reconciliation_report', date: today(), mode: 'live', truncated: false });
    expect(report.body.mismatches).toEqual(
      expect.arrayContaining([
        { operationId: lost.id, type: 'debit', problem: 'missing_at_bank', tolov: { status: 'SUCCEEDED', amount: 5_000 }, bank: null },
        { operationId: skewed.id, type: 'debit', problem: 'amount_differs', tolov: { status: 'SUCCEEDED', amount: 6_000 }, bank: { status: 'SUCCEEDED', amount: 6_001 } },
        { operationId: 'pi_stranger', type: 'debit', problem: 'missing_at_tolov', tolov: null, bank: { status: 'SUCCEEDED', amount: 900 } },
      ]),
    );
    expect(report.body.mismatches).toHaveLength(3);
    expect(report.body.mismatches.map((m: { operationId: string }) => m.operationId)).not.toContain(clean.id);

    // The CLI prints the same report and exits 1.
    const cli = spawn(process.execPath, ['--import', 'tsx', 'src/cli/reconcile.ts', today(), 'live'], {
      env: {
        PATH: process.env.PATH,
        TOLOV_DATA_DIR: 'memory://',
        TOLOV_LIVE_RAIL_URL: live.sim.url,
        TOLOV_LIVE_RAIL_SECRET: SIM_SECRET,
      },
    });
    let output = '';
    cli.stdout.on('data', (chunk) => (output += chunk));
    const code = await new Promise((resolve) => cli.on('exit', resolve));
    // This CLI's own (empty, embedded) database has no payments: the bank's three debits are all unknown to it.
    expect(code).toBe(1);
    const printed = JSON.parse(output);
    const problems = new Set(printed.mismatches.map((m: { problem: string }) => m.problem));
    expect({ mismatches: printed.mismatches.length > 0, problems: [...problems] }).toEqual({ mismatches: true, problems: ['missing_at_tolov'] });
  });

  it('answers only the operator, with a valid date', async () => {
    expect((await live.service.call({ method: 'GET', url: `/admin/v1/reconciliation?date=${today()}`, key: live.merchant.live })).status).toBe(401);
    for (const date of ['22-11-2026', '2026-13-45', '2026-02-30', '0000-00-00', '9999-12-31', '1969-12-31']) {
      const bad = await live.service.admin('GET', `/admin/v1/reconciliation?date=${date}`);
      expect({ date, status: bad.status, code: bad.body.code, param: bad.body.param }).toEqual({ date, status: 400, code: 'VALIDATION_ERROR', param: 'date' });
    }
    expect((await live.service.admin('GET', '/admin/v1/reconciliation?date=2024-02-29')).status).toBe(200);
  });
});

describe('npm run bank-sim', () => {
  it('runs as its own process on its own port and storage, started as the README says, and stops on SIGTERM', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tolov-sim-process-'));
    try {
      // `npm run bank-sim`: the SIGTERM npm passes on must reach the simulator itself, not only a shell between them.
      const child = spawn('npm', ['run', '--silent', 'bank-sim'], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, BANK_SIM_PORT: '0', BANK_SIM_SECRET: 's3cret', BANK_SIM_DATA_DIR: dir },
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no URL: ${output}`)), 30_000);
        child.stdout.on('data', () => {
          const match = /bank-sim listening on (\S+)/.exec(output);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]!);
          }
        });
      });
      expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' });
      const refused = await fetch(`${url}/v1/debits`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(refused.status).toBe(401);
      child.kill('SIGTERM');
      await new Promise((resolve) => child.on('exit', resolve));
      // Nothing answers on its port any more: no simulator was left running.
      await expect(fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses to start without a secret', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bank-sim/main.ts'], { env: { PATH: process.env.PATH, BANK_SIM_PORT: '0' } });
    let errors = '';
    child.stderr.on('data', (chunk) => (errors += chunk));
    expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(1);
    expect(errors).toContain('BANK_SIM_SECRET');
  });
});
