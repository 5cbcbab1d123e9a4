// A browser-like client of the dashboard over `inject`: it keeps cookies and sends each form's token back.
import { codeNow } from '../../src/modules/accounts/second-factor.js';
import type { TestService } from '../support/harness.js';
import { linkIn } from '../support/mailbox.js';

export interface Page {
  status: number;
  html: string;
  location: string | undefined;
  headers: Record<string, unknown>;
}

/** The password `signUp` chooses unless told another. */
export const SIGN_UP_PASSWORD = 'correct horse battery';

export class DashboardClient {
  readonly cookies = new Map<string, string>();
  lang = 'en';
  /** Each client comes from an address of its own, as people do; the per-address throttle tests choose theirs. */
  address = `10.${(++clients >> 16) & 255}.${(clients >> 8) & 255}.${clients & 255}`;

  constructor(private readonly service: Pick<TestService, 'app' | 'mailbox'>) {}

  private remember(setCookie: unknown): void {
    for (const line of ([] as string[]).concat((setCookie as string[] | string | undefined) ?? [])) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (/Max-Age=0/.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async get(url: string): Promise<Page> {
    const response = await this.service.app.inject({
      method: 'GET',
      url,
      remoteAddress: this.address,
      headers: { cookie: this.cookieHeader(), 'accept-language': this.lang },
    });
    this.remember(response.headers['set-cookie']);
    return { status: response.statusCode, html: response.body, location: response.headers.location as string | undefined, headers: response.headers };
  }

  /** Posts `fields` as a browser would, with the form token of the last page (or `csrf` when given). */
  async post(url: string, fields: Record<string, string | string[]>, options: { csrf?: string | null; origin?: string } = {}): Promise<Page> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(fields)) for (const one of ([] as string[]).concat(value)) body.append(name, one);
    const csrf = options.csrf === undefined ? await this.csrf() : options.csrf;
    if (csrf !== null) body.append('_csrf', csrf);
    const response = await this.service.app.inject({
      method: 'POST',
      url,
      remoteAddress: this.address,
      headers: {
        cookie: this.cookieHeader(),
        'content-type': 'application/x-www-form-urlencoded',
        'accept-language': this.lang,
        ...(options.origin ? { origin: options.origin } : {}),
      },
      payload: body.toString(),
    });
    this.remember(response.headers['set-cookie']);
    return { status: response.statusCode, html: response.body, location: response.headers.location as string | undefined, headers: response.headers };
  }

  /**
   * Posts `fields` and `files` as a browser posts a form with a file input (multipart/form-data), with the form token
   * of the last page; a file input left empty sends a part with no bytes, as browsers do.
   */
  async postMultipart(url: string, fields: Record<string, string>, files: Record<string, { filename: string; type: string; body: Buffer }>, options: { csrf?: string | null } = {}): Promise<Page> {
    const boundary = `----TolovTest${Date.now()}${++counter}`;
    const parts: Buffer[] = [];
    const csrf = options.csrf === undefined ? await this.csrf() : options.csrf;
    const all = csrf === null ? fields : { _csrf: csrf, ...fields };
    for (const [name, value] of Object.entries(all)) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
    for (const [name, file] of Object.entries(files)) {
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${file.filename}"\r\nContent-Type: ${file.type}\r\n\r\n`), file.body, Buffer.from('\r\n'));
    }
    parts.push(Buffer.from(`--${boundary}--\r\n`));
    const response = await this.service.app.inject({
      method: 'POST',
      url,
      remoteAddress: this.address,
      headers: { cookie: this.cookieHeader(), 'content-type': `multipart/form-data; boundary=${boundary}`, 'accept-language': this.lang },
      payload: Buffer.concat(parts),
    });
    this.remember(response.headers['set-cookie']);
    return { status: response.statusCode, html: response.body, location: response.headers.location as string | undefined, headers: response.headers };
  }

  /** The form token the dashboard's pages carry for this client now. */
  async csrf(): Promise<string> {
    let page = await this.get('/dashboard/team');
    if (page.status !== 200) page = await this.get('/dashboard/login');
    const match = /name="_csrf" value="([^"]+)"/.exec(page.html);
    if (!match) throw new Error(`no form token on the page (${page.status}): ${page.html.slice(0, 300)}`);
    return match[1]!;
  }

  /**
   * Signs up as a person does: the form, then the link the mail brings, opened, and the password chosen there; the
   * answer to that.
   */
  async signUp(email: string, password = SIGN_UP_PASSWORD, businessName = 'Chorsu Market'): Promise<Page> {
    const asked = await this.post('/dashboard/signup', { email, businessName });
    if (asked.status !== 200) throw new Error(`sign-up refused (${asked.status}): ${asked.html.slice(0, 300)}`);
    const link = linkIn(await this.service.mailbox.next(email.toLowerCase(), /Confirm your e-mail|Подтвердите почту|pochtangizni tasdiqlang/), '/dashboard/signup/confirm/');
    await this.get(link);
    return this.post(link, { password });
  }

  /** Opens the invitation mailed to `email`: the path of its link. */
  async invitationFor(email: string): Promise<string> {
    return linkIn(await this.service.mailbox.next(email, /invite|Приглашение|taklif/i), '/dashboard/invite/');
  }
}

let clients = 0;
let counter = 0;
/** The code of the next 30-second step: the one of this step was taken when the app was set up, and works once. */
export const nextCode = (seed: string) => codeNow(seed, Date.now() + 30_000);

export const uniqueEmail = (name = 'owner') => `${name}-${process.pid}-${Date.now()}-${++counter}@example.uz`;

/** A new account's owner who turned the second factor on, which their session thereby proved. */
export interface SecondFactorOwner {
  client: DashboardClient;
  email: string;
  seed: string;
}

export async function ownerWithSecondFactor(service: Pick<TestService, 'app' | 'mailbox'>, name = 'owner'): Promise<SecondFactorOwner> {
  const email = uniqueEmail(name);
  const client = new DashboardClient(service);
  await client.signUp(email);
  return { client, email, seed: await turnOnSecondFactor(client) };
}

/** Turns the second factor on from `client`'s session, as its user does on the security page, with `password`; the seed. */
export async function turnOnSecondFactor(client: DashboardClient, password = SIGN_UP_PASSWORD): Promise<string> {
  const setup = await client.post('/dashboard/account/second-factor/begin', {});
  const seed = /<code id="seed">([A-Z2-7]+)<\/code>/.exec(setup.html)?.[1];
  const sealed = /name="seed" value="([^"]+)"/.exec(setup.html)?.[1];
  if (!seed || !sealed) throw new Error('the second factor set-up page changed');
  const enabled = await client.post('/dashboard/account/second-factor/enable', { seed: sealed, password, code: codeNow(seed) });
  if (enabled.status !== 200) throw new Error(`second factor refused (${enabled.status})`);
  return seed;
}

/**
 * The code the owner's app shows next. Each 30-second step's code works once and a test makes several changes within
 * seconds: the step last used is forgotten, as if the owner had waited for the app's next code.
 */
export async function freshCode(service: Pick<TestService, 'db'>, owner: Pick<SecondFactorOwner, 'email' | 'seed'>): Promise<string> {
  await service.db.query('UPDATE users SET totp_last_step = NULL WHERE email = $1', [owner.email]);
  return codeNow(owner.seed);
}

/** A code the owner's app does not show around now. */
export const wrongCodeOf = (owner: Pick<SecondFactorOwner, 'seed'>) =>
  ['000000', '111111', '222222'].find((code) => ![codeNow(owner.seed), nextCode(owner.seed), codeNow(owner.seed, Date.now() - 30_000)].includes(code))!;
