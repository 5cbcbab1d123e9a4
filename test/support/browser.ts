import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const ARTIFACTS_DIR = 'test/artifacts';

/** True when Debian's Chromium is installed; CI installs it and sets TOLOV_REQUIRE_BROWSER so that a missing one fails. */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  if (process.env.TOLOV_REQUIRE_BROWSER) throw new Error(`${CHROMIUM_PATH} is missing but TOLOV_REQUIRE_BROWSER is set`);
  process.stderr.write(`${CHROMIUM_PATH} is missing: browser tests are skipped (apt-get install chromium).\n`);
  return false;
}

export async function launchBrowser(): Promise<Browser> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}
