// The API reference at /docs/api, in Chromium: every operation of the description rendered, from this origin alone,
// under the pages' strict CSP, read-only, usable on a phone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { browserAvailable, launchBrowser, screenshot } from '../support/browser.js';
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
    await screenshot(page, `api-reference`, { fullPage: false });
    // The introduction: the error codes and every failureCode, as tables.
    const introduction = page.locator('.information-container');
    expect(await introduction.locator('table').count()).toBe(2);
    expect(await introduction.locator('td', { hasText: /^INSUFFICIENT_FUNDS$/ }).count()).toBe(1);
    await screenshot(introduction, `api-reference-introduction`);

    const charge = page.locator('#operations-charges-createCharge');
    await charge.locator('.opblock-summary').click();
    await charge.locator('.parameter__name', { hasText: 'Idempotency-Key' }).waitFor();
    // The recorded request and answer, not a schema's placeholders ("string", 1); each refusal by status, with its codes.
    const recorded = (await service.admin('GET', '/admin/v1/openapi.json')).body.paths['/subscribe/v1/charges'].post;
    const sent = recorded.requestBody.content['application/json'].example;
    await expect.poll(() => charge.locator('.body-param__example').innerText()).toContain(`"amount": ${sent.amount}`);
    const answers = charge.locator('.responses-table .response');
    expect(await answers.locator('.response-col_status').allInnerTexts()).toEqual(['201', '400', '401', '403', '404', '409', '422', '429', '503', '4XX', '5XX']);
    const created = answers.filter({ has: page.locator('.response-col_status', { hasText: /^201$/ }) });
    expect(await created.locator('.response-col_description').innerText()).toMatch(/^The payment intent: SUCCEEDED/);
    expect(await created.locator('.microlight').first().innerText()).toContain(`"id": "${recorded.responses['201'].content['application/json'].example.id}"`);
    const conflict = answers.filter({ has: page.locator('.response-col_status', { hasText: /^409$/ }) });
    expect(await conflict.locator('.response-col_description').innerText()).toContain('IDEMPOTENCY_KEY_IN_USE');
    expect(await charge.innerText()).not.toContain('Default Response');
    await screenshot(charge, `api-reference-charge-operation`);
    expect(await page.getByRole('button', { name: 'Try it out' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Authorize' }).isVisible()).toBe(false);
    const tags = await page.locator('.opblock-tag-section h3').allInnerTexts();
    expect(tags[0]).toMatch(/^orders\n/);
    // The operator's calls are described to the operator token only (/admin/v1/openapi.json), never on this page.
    expect(tags.some((tag) => tag.startsWith('operator'))).toBe(false);
    await screenshot(page, `api-reference-charge`, { fullPage: false });
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
    await screenshot(page, `api-reference-phone`, { fullPage: false });
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
