// The API reference at /docs/api, in Chromium: every operation of the description rendered, from this origin alone,
// under the pages' strict CSP, read-only, usable on a phone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { ARTIFACTS_DIR, browserAvailable, launchBrowser } from '../support/browser.js';
import { startService, type TestService } from '../support/harness.js';

const hasBrowser = browserAvailable();
let service: TestService;
let base: string;
let browser: Browser;
beforeAll(async () => {
  service = await startService();
  base = await service.app.listen({ port: 0, host: '127.0.0.1' });
  if (hasBrowser) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await service.stop();
});

describe.runIf(hasBrowser)('GET /docs/api', () => {
  it('renders every operation of the description from this origin alone, under the CSP, without "Try it out"', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    const problems: string[] = [];
    const elsewhere: string[] = [];
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('request', (request) => !request.url().startsWith(base) && !request.url().startsWith('data:') && elsewhere.push(request.url()));
    const response = await page.goto(`${base}/docs/api`);
    expect(response!.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.locator('.opblock').first().waitFor();
    expect(await page.locator('.info .title').innerText()).toContain('Tolov API');
    const document = (await service.call({ method: 'GET', url: '/openapi.json' })).body;
    const operationIds = Object.values<Record<string, { operationId: string }>>(document.paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId));
    // Each operation, and each event under Webhooks.
    expect(await page.locator('.opblock').count()).toBe(operationIds.length + Object.keys(document.webhooks).length);
    await page.screenshot({ path: `${ARTIFACTS_DIR}/api-reference.png`, fullPage: false });

    await page.locator('#operations-charges-createCharge .opblock-summary').click();
    await page.locator('#operations-charges-createCharge .parameter__name', { hasText: 'Idempotency-Key' }).waitFor();
    expect(await page.getByRole('button', { name: 'Try it out' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Authorize' }).isVisible()).toBe(false);
    const tags = await page.locator('.opblock-tag-section h3').allInnerTexts();
    expect(tags[0]).toMatch(/^orders\n/);
    // The operator's calls are described to the operator token only (/admin/v1/openapi.json), never on this page.
    expect(tags.some((tag) => tag.startsWith('operator'))).toBe(false);
    await page.screenshot({ path: `${ARTIFACTS_DIR}/api-reference-charge.png`, fullPage: false });
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
    await context.close();
  });

  it('reads on a 390 px phone', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(`${base}/docs/api`);
    await page.locator('.opblock').first().waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${ARTIFACTS_DIR}/api-reference-phone.png`, fullPage: false });
    await context.close();
  });

  it('serves only the library files the page loads', async () => {
    for (const name of ['index.html', 'package.json', '..%2Fpackage.json', 'swagger-ui-bundle.js.map']) {
      expect((await fetch(`${base}/docs/api/library/${name}`)).status, name).toBe(404);
    }
    const bundle = await fetch(`${base}/docs/api/library/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  });
});
