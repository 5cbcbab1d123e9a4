import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');

/**
 * `tolov` run from the repository's sources to its end (as `npm run tolov --` runs it), against the API at `base` with
 * `key`, `env` over them: its exit status and what it printed.
 */
export async function runTolov(args: string[], target: { key: string; base: string }, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'packages/cli/src/cli.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, TOLOV_API_KEY: target.key, TOLOV_API_BASE: target.base, ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
