// The console's operators page: an admin invites by mail, the invitee joins, sets up the second factor and logs in on
// their own; an address that has a login is refused; an invitation not used yet can be revoked; an operator is removed,
// their sessions ended at once, and the last admin never is. Support reads the list without a form, and the admin's
// posts answer it 403.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, freshCode, uniqueEmail, wrongCodeOf } from '../dashboard/client.js';
import { startService, type TestService } from '../support/harness.js';
import { linkIn } from '../support/mailbox.js';
import { firstAdmin, invitedOperator, logIn, OperatorClient, PASSWORD, type Operator } from './client.js';

let service: TestService;
let admin: Operator;
let support: Operator;

beforeAll(async () => {
  service = await startService();
  admin = await firstAdmin(service);
  support = await invitedOperator(service, admin, 'support');
});
afterAll(() => service?.stop());

const auditOf = async (target: string) => (await service.admin('GET', `/admin/v1/audit_log?target=${target}`)).body.data as Array<Record<string, unknown>>;
const operatorId = async (email: string) => ((await service.admin('GET', '/admin/v1/operators')).body.data as Array<{ id: string; email: string }>).find((row) => row.email === email)?.id;
const removeForms = (html: string) => [...html.matchAll(/action="\/operator\/operators\/(usr_[A-Za-z0-9]+)\/remove" data-confirm="([^"]+)"/g)].map((match) => ({ id: match[1]!, confirm: match[2]! }));
const auditActions = async () => ((await service.admin('GET', '/admin/v1/audit_log')).body.data as Array<{ action: string; target: string | null }>).map((entry) => entry.action);
const invitationIds = (html: string) => [...html.matchAll(/\/operator\/operators\/invitations\/(inv_[A-Za-z0-9]+)\/revoke/g)].map((match) => match[1]!);

describe('inviting an operator', () => {
  it('mails a link with which the invitee joins, sets up the second factor and then logs in on their own', async () => {
    const page = await admin.client.get('/operator/operators');
    expect(page.status).toBe(200);
    // The invitee is an operator now, with the role invited as and the second factor set up; the invitation is used.
    expect(page.html).toMatch(new RegExp(`${support.email}</td><td data-label="Role">Support</td>\\s*<td data-label="Two-factor authentication">Set up</td>`));
    expect(page.html.split('<caption>Open invitations</caption>')[1] ?? '').not.toContain(support.email);
    const client = new OperatorClient(service);
    await logIn(service, client, support);
    expect((await client.get('/operator/operators')).status).toBe(200);
    expect(await auditActions()).toEqual(expect.arrayContaining(['operator.invited', 'operator.joined', 'operator.second_factor_enabled', 'operator.logged_in']));
  });

  it("refuses an address that has a login, an operator's or a merchant's, and mails nothing", async () => {
    const merchantEmail = uniqueEmail('merchant');
    await new DashboardClient(service).signUp(merchantEmail, PASSWORD);
    for (const email of [support.email, merchantEmail]) {
      const refused = await admin.client.post('/operator/operators/invite', { email, role: 'admin' });
      expect(refused.status, email).toBe(409);
      expect(refused.html).toContain('This e-mail already has a Tolov login');
      expect(service.mailbox.to(email).filter((mail) => /operator console/.test(mail.subject))).toHaveLength(email === support.email ? 1 : 0);
    }
  });

  it("asks for the admin's current code: without it or with a wrong one, nothing is mailed and no invitation is made", async () => {
    const email = uniqueEmail('unconfirmed');
    const form = (await admin.client.get('/operator/operators')).html;
    expect(form).toContain('name="code"');
    expect(form).toContain('A new operator is a new way into the console');
    for (const code of ['', wrongCodeOf(admin)]) {
      const refused = await admin.client.post('/operator/operators/invite', { email, role: 'admin', code });
      expect(refused.status, code).toBe(401);
      expect(refused.html).toContain('Nothing was changed: that code is not right, or was used already.');
      expect(refused.html).toContain(`value="${email}"`);
    }
    const [made] = await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM operator_invitations WHERE email = $1', [email]);
    expect(made!.n).toBe(0);
    expect(service.mailbox.to(email)).toEqual([]);
  });

  it('refuses a malformed address and an unknown role, showing the form again', async () => {
    const badEmail = await admin.client.post('/operator/operators/invite', { email: 'not-an-email', role: 'support' });
    expect(badEmail.status).toBe(400);
    expect(badEmail.html).toContain('Enter an email address');
    expect(badEmail.html).toContain('value="not-an-email"');
    const badRole = await admin.client.post('/operator/operators/invite', { email: uniqueEmail(), role: 'owner' });
    expect(badRole.status).toBe(400);
  });

  it('lists an open invitation until it is revoked; its link then opens nothing', async () => {
    const email = uniqueEmail('revoked');
    const invited = await admin.client.post('/operator/operators/invite', { email, role: 'admin', code: await freshCode(service, admin) });
    expect(invited.location).toBe('/operator/operators?done=invited');
    expect((await admin.client.get(invited.location!)).html).toContain('The invitation is sent.');
    const link = linkIn(await service.mailbox.next(email, /operator/i), '/operator/invite/');
    const listed = await admin.client.get('/operator/operators');
    expect(listed.html).toContain(email);
    const [id] = invitationIds(listed.html);
    expect(id).toBeDefined();

    const revoked = await admin.client.post(`/operator/operators/invitations/${id}/revoke`, {});
    expect(revoked.location).toBe('/operator/operators?done=revoked');
    expect((await admin.client.get('/operator/operators')).html).not.toContain(email);
    expect((await new OperatorClient(service).get(link)).status).toBe(404);
    // Revoking it again, or an id of nothing, says it is gone.
    expect((await admin.client.post(`/operator/operators/invitations/${id}/revoke`, {})).location).toBe('/operator/operators?refused=not_found');
    expect((await admin.client.post('/operator/operators/invitations/nonsense/revoke', {})).location).toBe('/operator/operators?refused=not_found');
  });
});

describe('support', () => {
  it('sees the operators and the open invitations, and no form to change them', async () => {
    const email = uniqueEmail('pending');
    await admin.client.post('/operator/operators/invite', { email, role: 'support', code: await freshCode(service, admin) });
    const page = await support.client.get('/operator/operators');
    expect(page.status).toBe(200);
    expect(page.html).toContain(admin.email);
    expect(page.html).toContain(email);
    expect(page.html).not.toContain('action="/operator/operators/invite"');
    expect(invitationIds(page.html)).toEqual([]);
    expect(invitationIds((await admin.client.get('/operator/operators')).html).length).toBeGreaterThan(0);
  });

  it('is refused the invitation and the revocation: 403, nothing mailed, nothing revoked', async () => {
    const email = uniqueEmail('by-support');
    const invite = await support.client.post('/operator/operators/invite', { email, role: 'admin' });
    expect(invite.status).toBe(403);
    const [id] = invitationIds((await admin.client.get('/operator/operators')).html);
    const revoke = await support.client.post(`/operator/operators/invitations/${id}/revoke`, {});
    expect(revoke.status).toBe(403);
    expect(invitationIds((await admin.client.get('/operator/operators')).html)).toContain(id);
    const [invited] = await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM operator_invitations WHERE email = $1', [email]);
    expect(invited!.n).toBe(0);
  });
});

describe('the page’s notices', () => {
  it('are only the ones it knows: a name every object has finds none, and is no error', async () => {
    for (const query of ['done=toString', 'done=constructor', 'refused=__proto__', 'refused=hasOwnProperty']) {
      const page = await admin.client.get(`/operator/operators?${query}`);
      expect(page.status, query).toBe(200);
      expect(page.html, query).not.toContain('class="notice');
    }
  });
});

describe('removing an operator', () => {
  it('ends their open session at once, their password opens nothing, and the audit log says who removed whom', async () => {
    const leaving = await invitedOperator(service, admin, 'support');
    const id = (await operatorId(leaving.email))!;
    expect((await leaving.client.get('/operator/operators')).status).toBe(200);
    const form = removeForms((await admin.client.get('/operator/operators')).html).find((found) => found.id === id);
    // The browser asks before it posts, naming whom.
    expect(form?.confirm).toContain(leaving.email);

    const removed = await admin.client.post(`/operator/operators/${id}/remove`, {});
    expect(removed.location).toBe('/operator/operators?done=removed');
    const after = await admin.client.get(removed.location!);
    expect(after.html).toContain('The operator is removed');
    expect(after.html).not.toContain(leaving.email);

    const refused = await leaving.client.get('/operator/operators');
    expect(refused.status).toBe(303);
    expect(refused.location).toBe('/operator/login');
    expect((await new OperatorClient(service).post('/operator/login', { email: leaving.email, password: PASSWORD })).status).toBe(401);
    expect(await auditOf(id)).toContainEqual(expect.objectContaining({ action: 'operator.removed', via: 'console', operator: expect.objectContaining({ email: admin.email }), detail: `${leaving.email} (support)` }));

    // Removed already: nothing to remove, and said so.
    const again = await admin.client.post(`/operator/operators/${id}/remove`, {});
    expect(again.status).toBe(404);
    expect(again.html).toContain('This operator was removed already');
    expect((await admin.client.post('/operator/operators/usr_nobody/remove', {})).status).toBe(404);
  });

  it('revokes the invitations they sent: a link a removed admin mailed opens nothing', async () => {
    const leaving = await invitedOperator(service, admin, 'admin');
    const email = uniqueEmail('left-open');
    expect((await leaving.client.post('/operator/operators/invite', { email, role: 'admin', code: await freshCode(service, leaving) })).location).toBe('/operator/operators?done=invited');
    const link = linkIn(await service.mailbox.next(email, /operator/i), '/operator/invite/');
    const kept = uniqueEmail('kept-open');
    expect((await admin.client.post('/operator/operators/invite', { email: kept, role: 'support', code: await freshCode(service, admin) })).location).toBe('/operator/operators?done=invited');

    expect((await admin.client.post(`/operator/operators/${(await operatorId(leaving.email))!}/remove`, {})).location).toBe('/operator/operators?done=removed');
    const invitee = new OperatorClient(service);
    expect((await invitee.get(link)).status).toBe(404);
    expect((await invitee.post(link, { password: PASSWORD })).status).toBe(404);
    expect(await operatorId(email)).toBeUndefined();
    // Only theirs: the remaining admin's invitation stays open.
    const listed = (await admin.client.get('/operator/operators')).html.split('<caption>Open invitations</caption>')[1] ?? '';
    expect(listed).not.toContain(email);
    expect(listed).toContain(kept);
  });

  it('removes an admin while another remains, and refuses to remove the last one', async () => {
    const second = await invitedOperator(service, admin, 'admin');
    const secondId = (await operatorId(second.email))!;
    expect((await admin.client.post(`/operator/operators/${secondId}/remove`, {})).location).toBe('/operator/operators?done=removed');
    expect((await second.client.get('/operator/operators')).status).toBe(303);

    const adminId = (await operatorId(admin.email))!;
    const last = await admin.client.post(`/operator/operators/${adminId}/remove`, {});
    expect(last.status).toBe(409);
    expect(last.html).toContain('This is the last admin');
    expect((await admin.client.get('/operator/operators')).status).toBe(200);
    expect(await operatorId(admin.email)).toBe(adminId);
    expect((await auditOf(adminId)).map((entry) => entry.action)).not.toContain('operator.removed');
  });

  it('is refused to support: 403, no form, and the operator stays', async () => {
    const adminId = (await operatorId(admin.email))!;
    expect(removeForms((await support.client.get('/operator/operators')).html)).toEqual([]);
    expect((await support.client.post(`/operator/operators/${adminId}/remove`, {})).status).toBe(403);
    expect(await operatorId(admin.email)).toBe(adminId);
    expect((await admin.client.get('/operator/operators')).status).toBe(200);
  });
});
