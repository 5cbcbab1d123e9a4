// The team: invitations by one-time link, roles that decide what each member sees and changes, and the audit log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/harness.js';
import { linkIn } from '../support/mailbox.js';
import { DashboardClient, uniqueEmail } from './client.js';

let service: TestService;
beforeAll(async () => {
  service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
});
afterAll(async () => service.stop());

const PASSWORD = 'correct horse battery';

/** An owner, and a member of each other role who joined by invitation. */
async function team() {
  const owner = new DashboardClient(service);
  await owner.signUp(uniqueEmail('owner'));
  const members: Record<'developer' | 'viewer', DashboardClient> = { developer: new DashboardClient(service), viewer: new DashboardClient(service) };
  for (const role of ['developer', 'viewer'] as const) {
    const email = uniqueEmail(role);
    const invited = await owner.post('/dashboard/team/invite', { email, role });
    expect(invited.status).toBe(201);
    // The link goes to the invited address only: the owner's page never shows it.
    expect(invited.html).toContain(`Invitation sent to ${email}.`);
    expect(invited.html).not.toContain('/dashboard/invite/');
    const mail = await service.mailbox.next(email);
    expect(mail.subject).toBe('You are invited to Chorsu Market on Tolov');
    expect(mail.text).toMatch(/^http:\/\/127\.0\.0\.1:4000\/dashboard\/invite\/[A-Za-z0-9_-]{43}$/m);
    const path = linkIn(mail, '/dashboard/invite/');
    const page = await members[role].get(path);
    expect(page.status).toBe(200);
    expect(page.html).toContain(`value="${email}" readonly`);
    const joined = await members[role].post(path, { password: PASSWORD });
    expect(joined.status).toBe(303);
    // Used once.
    expect((await new DashboardClient(service).get(path)).status).toBe(404);
  }
  return { owner, ...members };
}

/** An endpoint made by the owner, and a delivery to it. */
async function endpointOf(owner: DashboardClient) {
  const added = await owner.post('/dashboard/webhooks', { url: 'http://127.0.0.1:9/hooks', description: 'Orders' });
  expect(added.status).toBe(201);
  const id = /\/dashboard\/webhooks\/(we_[0-9A-Za-z]+)\/test/.exec(added.html)![1]!;
  await owner.post(`/dashboard/webhooks/${id}/test`, {});
  const [delivery] = await service.db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE endpoint_id = $1', [id]);
  return { id, delivery: delivery!.id };
}

describe('roles', () => {
  it('a viewer sees payments, orders and webhooks, but no key or secret, and changes nothing even by direct POSTs', async () => {
    const { owner, viewer } = await team();
    const { id, delivery } = await endpointOf(owner);
    expect((await viewer.get('/dashboard/payments')).status).toBe(200);
    const list = await viewer.get('/dashboard/webhooks');
    expect(list.status).toBe(200);
    expect(list.html).toContain('http://127.0.0.1:9/hooks');
    expect(list.html).not.toContain('Add endpoint');
    expect(list.html).not.toContain('href="/dashboard/api-keys"');
    const detail = await viewer.get(`/dashboard/webhooks/${id}`);
    expect(detail.status).toBe(200);
    expect(detail.html).toContain('Delivery log');
    expect(detail.html).not.toMatch(/Reveal secret|Roll secret|Send test event|Retry now|whsec_/);
    expect((await viewer.get('/dashboard/api-keys')).status).toBe(403);

    const before = await service.db.query('SELECT (SELECT count(*) FROM api_keys) AS keys, (SELECT count(*) FROM webhook_endpoints) AS endpoints, (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM invitations) AS invitations');
    const posts: Array<[string, Record<string, string>]> = [
      ['/dashboard/api-keys', {}],
      ['/dashboard/webhooks', { url: 'https://hooks.example.com/x' }],
      [`/dashboard/webhooks/${id}/reveal`, { password: PASSWORD }],
      [`/dashboard/webhooks/${id}/roll`, { overlapSeconds: '0' }],
      [`/dashboard/webhooks/${id}/disable`, {}],
      [`/dashboard/webhooks/${id}/delete`, {}],
      [`/dashboard/webhooks/${id}/test`, {}],
      [`/dashboard/webhooks/${id}/deliveries/${delivery}/retry`, {}],
      ['/dashboard/team/invite', { email: uniqueEmail(), role: 'owner' }],
    ];
    for (const [url, fields] of posts) {
      const page = await viewer.post(url, fields);
      expect(page.status, url).toBe(403);
      expect(page.html).not.toContain('whsec_');
    }
    const after = await service.db.query('SELECT (SELECT count(*) FROM api_keys) AS keys, (SELECT count(*) FROM webhook_endpoints) AS endpoints, (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM invitations) AS invitations');
    expect(after).toEqual(before);
    expect((await service.db.query<{ status: string }>('SELECT status FROM webhook_endpoints WHERE id = $1', [id]))[0]!.status).toBe('enabled');
  });

  it('a developer manages keys and webhooks, but not the team', async () => {
    const { developer } = await team();
    expect((await developer.post('/dashboard/api-keys', {})).html).toMatch(/sk_test_[0-9A-Za-z]{32}/);
    const added = await developer.post('/dashboard/webhooks', { url: 'http://127.0.0.1:9/dev' });
    expect(added.status).toBe(201);
    expect(added.html).toMatch(/whsec_[A-Za-z0-9+/=]{40,}/);
    const teamPage = await developer.get('/dashboard/team');
    expect(teamPage.status).toBe(200);
    expect(teamPage.html).not.toContain('Invite a member');
    expect((await developer.post('/dashboard/team/invite', { email: uniqueEmail(), role: 'viewer' })).status).toBe(403);
    expect((await developer.get('/dashboard/team/audit')).status).toBe(403);
  });

  it('an owner changes roles and removes members, whose sessions end; an account keeps an owner', async () => {
    const { owner, viewer } = await team();
    const ownerId = (await service.db.query<{ user_id: string }>(
      `SELECT s.user_id FROM dashboard_sessions s WHERE s.token_hash = sha256($1::bytea)`,
      [Buffer.from(owner.cookies.get('tolov_session')!)],
    ))[0]!.user_id;
    const demoted = await owner.post(`/dashboard/team/members/${ownerId}/role`, { role: 'viewer' });
    expect(demoted.location).toBe('/dashboard/team?refused=last_owner');
    expect((await owner.get(demoted.location!)).html).toContain('An account needs at least one owner');
    expect((await owner.post(`/dashboard/team/members/${ownerId}/remove`, {})).location).toBe('/dashboard/team?refused=last_owner');

    const viewerId = (await service.db.query<{ user_id: string }>(
      `SELECT s.user_id FROM dashboard_sessions s WHERE s.token_hash = sha256($1::bytea)`,
      [Buffer.from(viewer.cookies.get('tolov_session')!)],
    ))[0]!.user_id;
    expect((await owner.post(`/dashboard/team/members/${viewerId}/role`, { role: 'developer' })).location).toBe('/dashboard/team?done=role');
    expect((await viewer.get('/dashboard/api-keys')).status).toBe(200);
    expect((await owner.post(`/dashboard/team/members/${viewerId}/remove`, {})).location).toBe('/dashboard/team?done=removed');
    expect((await viewer.get('/dashboard/payments')).location).toBe('/dashboard/login');

    const audit = await owner.get('/dashboard/team/audit');
    expect(audit.status).toBe(200);
    for (const action of ['account.created', 'team.invited', 'team.joined', 'team.role_changed', 'team.removed']) expect(audit.html).toContain(action);
  });

  it('mails one address at most 3 invitations an hour from one account, and one account at most 20: then 429 with the wait, nothing mailed', async () => {
    const invitee = uniqueEmail('flooded');
    const owners = [new DashboardClient(service), new DashboardClient(service)];
    for (const owner of owners) await owner.signUp(uniqueEmail('owner'));
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await owners[0]!.post('/dashboard/team/invite', { email: invitee, role: 'viewer' })).status);
    expect(statuses).toEqual([201, 201, 201, 429]);
    const refused = await owners[0]!.post('/dashboard/team/invite', { email: invitee, role: 'developer' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3000);
    expect(refused.html).toMatch(/Too many attempts\. Try again in \d+ min\./);
    for (let i = 0; i < 3; i++) await service.mailbox.next(invitee);
    // Another account is not kept from inviting the address.
    expect((await owners[1]!.post('/dashboard/team/invite', { email: invitee, role: 'viewer' })).status).toBe(201);
    await service.mailbox.next(invitee);

    // The first owner has sent 3 of its 20: 17 more to other addresses, then refused.
    const more = [];
    for (let i = 0; i < 18; i++) more.push((await owners[0]!.post('/dashboard/team/invite', { email: uniqueEmail('many'), role: 'viewer' })).status);
    expect(more).toEqual([...Array<number>(17).fill(201), 429]);
    expect(service.mailbox.to(invitee)).toHaveLength(4);
  });

  it('refuses an invitation link that was revoked; an existing login joins from its own session, not by a password typed on the link', async () => {
    const owner = new DashboardClient(service);
    await owner.signUp(uniqueEmail());
    const revokedEmail = uniqueEmail();
    const revoked = await owner.post('/dashboard/team/invite', { email: revokedEmail, role: 'viewer' });
    const invitationId = /\/dashboard\/team\/invitations\/(inv_[0-9A-Za-z]+)\/revoke/.exec(revoked.html)![1]!;
    expect((await owner.post(`/dashboard/team/invitations/${invitationId}/revoke`, {})).location).toBe('/dashboard/team?done=revoked');
    const gone = await new DashboardClient(service).get(await owner.invitationFor(revokedEmail));
    expect(gone.status).toBe(404);
    expect(gone.html).toContain('This invitation is no longer valid');

    const existing = uniqueEmail('existing');
    const theirs = new DashboardClient(service);
    await theirs.signUp(existing, PASSWORD, 'Own Shop');
    await owner.post('/dashboard/team/invite', { email: existing, role: 'developer' });
    const path = await owner.invitationFor(existing);
    const stranger = new DashboardClient(service);
    const asked = await stranger.get(path);
    expect(asked.html).toContain(`You have a Tolov login with ${existing}: log in with it, then open this invitation again.`);
    expect(asked.html).not.toContain('name="password"');
    expect((await stranger.post(path, { password: PASSWORD })).status).toBe(409);
    // From the login's own session, one button.
    expect((await theirs.get(path)).html).toContain('Join the team');
    const joined = await theirs.post(path, {});
    expect(joined.location).toBe('/dashboard');
    expect((await theirs.get('/dashboard/payments')).html).toContain('Chorsu Market');
    expect((await new DashboardClient(service).get(path)).status).toBe(404);
  });
});
