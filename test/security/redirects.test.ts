// A redirect built from the request's own address stays on this origin: its Location is a path that starts with one
// `/`, never `//` or `/\`, which a client reads as another host.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/harness.js';

let service: TestService;
let base: URL;
beforeAll(async () => {
  service = await startService();
  base = new URL(await service.app.listen({ port: 0, host: '127.0.0.1' }));
});
afterAll(async () => service.stop());

/**
 * A GET of `path` exactly as written, over a socket: inject (like a browser) resolves the dots before sending, so
 * `/dashboard/..//evil.example/` would never reach the dashboard through it.
 */
function rawGet(path: string): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    const sent = request({ host: base.hostname, port: base.port, path, method: 'GET' }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode!, location: response.headers.location }));
    });
    sent.on('error', reject);
    sent.end();
  });
}

/** Whether a Location stays on this origin: a path with a single leading slash. */
const sameOrigin = (location: string) => /^\/(?![/\\])/.test(location);

describe('the dashboard language switch (?lang=)', () => {
  it.each([
    '/dashboard/..//evil.example/?lang=en',
    '/dashboard/../..//evil.example/?lang=ru',
    '/dashboard/..%2F/evil.example/?lang=en',
    '/dashboard//evil.example?lang=en',
    '/dashboard/%2F%2Fevil.example?lang=uz',
    '/dashboard/..\\\\evil.example/?lang=en',
    '/dashboard/../\\evil.example/?lang=en',
    '/dashboard/.././/evil.example?lang=en',
    '/dashboard/%2e%2e//evil.example/?lang=en',
  ])('redirects %s to a path on this origin', async (path) => {
    const answer = await rawGet(path);
    expect(answer.status).toBe(303);
    expect(answer.location).toBeDefined();
    expect(sameOrigin(answer.location!)).toBe(true);
    expect(new URL(answer.location!, base).origin).toBe(base.origin);
  });

  it.each([
    '/dashboard//evil.example?lang=en',
    '/dashboard/%2F%2Fevil.example?lang=en',
    '/dashboard/%5C%5Cevil.example?lang=en',
  ])('redirects %s, sent through inject, to a path on this origin', async (url) => {
    const answer = await service.app.inject({ method: 'GET', url });
    expect(answer.statusCode).toBe(303);
    expect(sameOrigin(String(answer.headers.location))).toBe(true);
  });

  it('keeps the page and its other parameters, without lang', async () => {
    expect((await rawGet('/dashboard/payments?status=FAILED&lang=ru&q=a%20b')).location).toBe('/dashboard/payments?status=FAILED&q=a+b');
    expect((await rawGet('/dashboard/..//evil.example/?lang=en')).location).toBe('/evil.example/');
  });
});
