import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';
const ARTIFACTS_DIR = 'test/artifacts';

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

/**
 * Saves what `target` shows as `test/artifacts/<name>.png`, the whole page unless `fullPage` is false. Chromium on a
 * busy machine now and then fails to copy a frame ("Unable to capture screenshot") of a page that renders well; a
 * screenshot is kept to be looked at, not asserted, so that failure is taken again, at most three times in all.
 */
export async function screenshot(target: Page | Locator, name: string, { fullPage = true } = {}): Promise<void> {
  const path = `${ARTIFACTS_DIR}/${name}.png`;
  for (let attempt = 1; ; attempt++) {
    try {
      await ('goto' in target ? target.screenshot({ path, fullPage }) : target.screenshot({ path }));
      return;
    } catch (error) {
      if (attempt === 3 || !String(error).includes('Unable to capture screenshot')) throw error;
    }
  }
}

export const PHONE_VIEWPORT = { width: 390, height: 844 };
export const DESKTOP_VIEWPORT = { width: 1280, height: 800 };

/**
 * Opens `url` as a buyer's phone would (set to `locale`, Uzbek unless given; or at another `viewport`), with the page's
 * clock under the test's control, and collects the page's problems: its uncaught errors and console errors. Chromium
 * logs every 4xx answer; the refusals a test provokes are expected, anything else is a problem. `prepare` runs before
 * the page is opened, to route its requests.
 */
export async function openAsBuyer(
  browser: Browser,
  url: string,
  locale = 'uz-UZ',
  { viewport = PHONE_VIEWPORT, javaScriptEnabled = true, prepare = async (_page: Page): Promise<unknown> => undefined } = {},
): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1, locale, javaScriptEnabled });
  context.setDefaultTimeout(5_000);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !/responded with a status of 4\d\d/.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  await page.clock.install();
  await prepare(page);
  await page.goto(url);
  return { page, problems };
}

/**
 * A context of `base`'s pages at `width` in `locale` (with `cookies`, a signed-in dashboard session say) that collects
 * the page's problems: its uncaught errors, its console errors but the 4xx answers a test provokes, and every request
 * that leaves for another host.
 */
export async function openWatched(
  browser: Browser,
  base: string,
  options: { width: number; locale: string; cookies?: Array<{ name: string; value: string }> },
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: options.width, height: 900 }, locale: options.locale, deviceScaleFactor: 1 });
  context.setDefaultTimeout(5_000);
  if (options.cookies) await context.addCookies(options.cookies.map((cookie) => ({ ...cookie, url: base })));
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('request', (request) => {
    if (!request.url().startsWith(base)) problems.push(`request to another host: ${request.url()}`);
  });
  return { context, page, problems };
}
