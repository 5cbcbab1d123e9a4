// Operators as the console's tests use them: the dashboard's browser-like client on /operator, the first admin made
// with the operator token, and others invited by mail, each with the second factor set up.
import { codeNow } from '../../src/modules/accounts/second-factor.js';
import { DashboardClient, freshCode, uniqueEmail } from '../dashboard/client.js';
import type { TestService } from '../support/harness.js';
import { linkIn } from '../support/mailbox.js';

export const PASSWORD = 'operator horse battery';

export class OperatorClient extends DashboardClient {
  /** The form token of the console's pages for this client now: any page shows it, an unknown one too. */
  override async csrf(): Promise<string> {
    const page = await this.get('/operator/login');
    const shown = page.status === 200 ? page : await this.get('/operator/no-such-page');
    const match = /name="_csrf" value="([^"]+)"/.exec(shown.html);
    if (!match) throw new Error(`no form token on the console's page (${shown.status}): ${shown.html.slice(0, 300)}`);
    return match[1]!;
  }
}

export interface Operator {
  client: OperatorClient;
  email: string;
  seed: string;
}

/** Sets up the second factor on the page a new operator's session opens: the seed its app now holds. */
export async function setUpSecondFactor(client: OperatorClient): Promise<string> {
  const setup = await client.get('/operator/second-factor');
  const seed = /<code id="seed">([A-Z2-7]+)<\/code>/.exec(setup.html)?.[1];
  const sealed = /name="seed" value="([^"]+)"/.exec(setup.html)?.[1];
  if (!seed || !sealed) throw new Error(`the second factor set-up page changed (${setup.status})`);
  const done = await client.post('/operator/second-factor', { seed: sealed, code: codeNow(seed) });
  if (done.status !== 200) throw new Error(`second factor refused (${done.status})`);
  return seed;
}

/** Logs in with the password and the code of the next step (this step's was taken at the set-up). */
export async function logIn(service: Pick<TestService, 'db'>, client: OperatorClient, operator: { email: string; seed: string }): Promise<void> {
  const password = await client.post('/operator/login', { email: operator.email, password: PASSWORD });
  if (password.location !== '/operator/login/verify') throw new Error(`log-in refused (${password.status})`);
  await service.db.query('UPDATE users SET totp_last_step = NULL WHERE email = $1', [operator.email]);
  const verified = await client.post('/operator/login/verify', { code: codeNow(operator.seed) });
  if (verified.location !== '/operator') throw new Error(`code refused (${verified.status})`);
}

/** The first operator, an admin, made with the operator token, logged in and with the second factor set up. */
export async function firstAdmin(service: TestService): Promise<Operator> {
  const email = uniqueEmail('admin');
  const created = await service.admin('POST', '/admin/v1/operators', { email, password: PASSWORD, role: 'admin' });
  if (created.status !== 201) throw new Error(`operator refused (${created.status}): ${JSON.stringify(created.body)}`);
  const client = new OperatorClient(service);
  const loggedIn = await client.post('/operator/login', { email, password: PASSWORD });
  if (loggedIn.location !== '/operator/second-factor') throw new Error(`first log-in refused (${loggedIn.status})`);
  return { client, email, seed: await setUpSecondFactor(client) };
}

/** An operator invited by `admin` from the console, joined through the mailed link, with the second factor set up. */
export async function invitedOperator(service: TestService, admin: Operator, role: 'admin' | 'support'): Promise<Operator> {
  const email = uniqueEmail(role);
  const invited = await admin.client.post('/operator/operators/invite', { email, role, code: await freshCode(service, admin) });
  if (invited.status !== 303 && invited.status !== 200) throw new Error(`invitation refused (${invited.status}): ${invited.html.slice(0, 300)}`);
  const link = linkIn(await service.mailbox.next(email, /operator/i), '/operator/invite/');
  const client = new OperatorClient(service);
  await client.get(link);
  const joined = await client.post(link, { password: PASSWORD });
  if (joined.location !== '/operator/second-factor') throw new Error(`joining refused (${joined.status})`);
  return { client, email, seed: await setUpSecondFactor(client) };
}
