// A change of the account's owners in Chromium, on a 390 px phone in Russian: the invitation as owner asks for the
// authenticator's code on a page of its own, refuses a wrong code there, and is sent with the right one; typed by
// keyboard. Screenshots: test/artifacts/dashboard-owner-change-*.png.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../src/web/dashboard/context.js';
import { ru } from '../../src/web/dashboard/messages/ru.js';
import { browserAvailable, launchBrowser, openWatched, screenshot } from '../support/browser.js';
import { startService, type TestService } from '../support/harness.js';
import { freshCode, ownerWithSecondFactor, uniqueEmail, wrongCodeOf, type SecondFactorOwner } from './client.js';

let service: TestService;
let browser: Browser;
let base: string;
let owner: SecondFactorOwner;

const shot = (page: Page, name: string) => screenshot(page, `dashboard-owner-change-${name}`);
const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

describe.runIf(browserAvailable())('a change of owners in the dashboard, in Chromium', () => {
  beforeAll(async () => {
    service = await startService();
    base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
    owner = await ownerWithSecondFactor(service);
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('asks for the code on a page of its own, says a wrong one was refused, and sends the invitation with the right one', async () => {
    const { context, page, problems } = await openWatched(browser, base, {
      width: 390,
      locale: 'ru-RU',
      cookies: [
        { name: SESSION_COOKIE, value: owner.client.cookies.get(SESSION_COOKIE)! },
        { name: 'tolov_lang', value: 'ru' },
      ],
    });
    const email = uniqueEmail('co-owner');
    await page.goto(`${base}/dashboard/team`);
    await page.locator('#invite-email').fill(email);
    await page.locator('#invite-role').selectOption('owner');
    await page.getByRole('button', { name: ru.createInvitation }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(ru.ownerChangeTitle);
    expect(await page.locator('#owner-change-summary').textContent()).toBe(ru.ownerChangeInvite.replace('{email}', email));
    await shot(page, 'asked-ru');

    await page.getByLabel(ru.authenticationCode).fill(wrongCodeOf(owner));
    await page.keyboard.press('Enter');
    await page.getByText(ru.changeCodeWrong).waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(ru.ownerChangeTitle);
    await shot(page, 'wrong-code-ru');

    await page.getByLabel(ru.authenticationCode).fill(await freshCode(service, owner));
    await page.keyboard.press('Enter');
    await page.getByText(ru.inviteSent.replace('{email}', email)).waitFor();
    expect(await page.locator('table').last().textContent()).toContain(email);
    await shot(page, 'sent-ru');
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    expect(problems).toEqual([]);
    await context.close();
  });
});
