// The dashboard's three languages: the same words in each, chosen from the browser, remembered once picked; and the
// API's own rules, said in the page's language, for what the dashboard refuses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SENT_EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES } from '../../src/modules/webhooks/events.js';
import { LANGS, MESSAGES } from '../../src/web/dashboard/i18n.js';
import { startService, type TestService } from '../support/harness.js';
import { DashboardClient, uniqueEmail } from './client.js';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(async () => service.stop());

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort();

describe('languages', () => {
  it('have the same keys, none empty, with the same placeholders', () => {
    const keys = Object.keys(MESSAGES.en).sort();
    expect(keys.length).toBeGreaterThan(100);
    for (const lang of LANGS) {
      expect(Object.keys(MESSAGES[lang]).sort(), lang).toEqual(keys);
      for (const key of keys) {
        const text = MESSAGES[lang][key as keyof (typeof MESSAGES)['en']];
        expect(text.trim(), `${lang}.${key}`).not.toBe('');
        expect(placeholders(text), `${lang}.${key}`).toEqual(placeholders(MESSAGES.en[key as keyof (typeof MESSAGES)['en']]));
      }
    }
  });

  it('follow the browser’s Accept-Language by its order of preference, Uzbek when it names none of the three', async () => {
    const cases: Array<[string, string, string]> = [
      ['ru-RU,ru;q=0.9,en;q=0.8', 'ru', 'Вход в Tolov'],
      ['en;q=0.5, ru;q=0.9', 'ru', 'Вход в Tolov'],
      ['en-GB,en;q=0.9', 'en', 'Log in to Tolov'],
      ['de-DE,fr;q=0.8', 'uz', 'Tolovga kirish'],
      ['', 'uz', 'Tolovga kirish'],
    ];
    for (const [header, lang, title] of cases) {
      const client = new DashboardClient(service);
      client.lang = header;
      const page = await client.get('/dashboard/login');
      expect(page.html, header).toContain(`<html lang="${lang}">`);
      expect(page.html).toContain(`<h1>${title}</h1>`);
    }
  });

  it('remember the language picked, over the browser’s', async () => {
    const client = new DashboardClient(service);
    client.lang = 'ru';
    const picked = await client.get('/dashboard/login?lang=en');
    expect(picked.status).toBe(303);
    expect(picked.location).toBe('/dashboard/login');
    expect((await client.get('/dashboard/login')).html).toContain('<html lang="en">');
    // Anything else than the three is not a language.
    expect((await client.get('/dashboard/login?lang=constructor')).status).toBe(200);
    expect((await client.get('/dashboard/login')).html).toContain('<html lang="en">');
  });
});

describe('webhook addresses in the dashboard', () => {
  it('are held to the API’s rules, with a refusal that says how to fix it, creating nothing', async () => {
    const client = new DashboardClient(service);
    await client.signUp(uniqueEmail());
    const before = await service.db.query('SELECT count(*)::int AS n FROM webhook_endpoints');
    for (const url of ['http://shop.example.uz/hooks', 'https://127.0.0.1/hooks', 'https://localhost/hooks', 'not a url']) {
      const page = await client.post('/dashboard/webhooks', { url });
      expect(page.status, url).toBe(400);
      expect(page.html).toContain('This URL cannot receive webhooks');
      expect(page.html).toContain(`value="${url}"`);
    }
    const plain = (await client.post('/dashboard/webhooks', { url: 'http://shop.example.uz/hooks' })).html;
    // Said once, in the page's words, without the API's backticks; with the way to receive events on one's own machine.
    expect(plain).toContain('This URL cannot receive webhooks: it must start with https://. To receive events on your own machine, run “tolov listen --forward-to &lt;your URL&gt;”.');
    expect(plain).not.toContain('`');
    client.lang = 'ru';
    expect((await client.post('/dashboard/webhooks', { url: 'https://127.0.0.1/hooks' })).html).toContain('Этот URL не может принимать вебхуки: он указывает на частный адрес.');
    expect((await client.post('/dashboard/webhooks', { url: 'not a url' })).html).not.toContain('tolov listen');
    expect(await service.db.query('SELECT count(*)::int AS n FROM webhook_endpoints')).toEqual(before);
  });

  it('offers only the event types Tolov sends, and shows the others as not sent yet', async () => {
    const client = new DashboardClient(service);
    await client.signUp(uniqueEmail());
    const form = (await client.get('/dashboard/webhooks')).html;
    const offered = [...form.matchAll(/<input type="checkbox" name="events" value="([^"]+)"/g)].map((match) => match[1]);
    expect(offered).toEqual([...SENT_EVENT_TYPES]);
    expect(form).toContain('<p class="hint">Not sent yet:</p>');
    for (const type of SUBSCRIBABLE_EVENT_TYPES.filter((one) => !offered.includes(one))) expect(form).toContain(`<input type="checkbox" disabled> <code>${type}</code>`);
  });
});
