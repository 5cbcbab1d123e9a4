// Going live: the payouts' owner asks for live mode in the dashboard; the operator lists the queue, reads the request,
// rejects it with what to correct, and approves the corrected one (live mode on, the live payout account set).
import { randomUUID } from 'node:crypto';
import { freshCode, OWNER, type Owner } from './payouts.js';
import { Recorder } from './recorder.js';

const ok = Recorder.expect;
const REQUEST = {
  legalName: '"Chorsu Market" MChJ',
  tin: '301234567',
  legalAddress: 'Toshkent sh., Chilonzor tumani, Bunyodkor ko\u02bbchasi, 12-uy',
  website: 'https://t.me/chorsumarket',
  category: 'retail',
  bankMfo: '00440',
  accountNumber: '20208000505368522001',
  holderTin: '301234567',
  holderName: '"Chorsu Market" MChJ',
};

async function submit(s: Recorder, owner: Owner, request: typeof REQUEST): Promise<void> {
  const sent = await owner.client.post('/dashboard/activation', { ...request, code: await freshCode(s, owner), idempotencyKey: randomUUID() });
  if (sent.status >= 400) throw new Error(`the activation request was refused (${sent.status})`);
}

export async function activationIsReviewed(s: Recorder, owner: Owner): Promise<void> {
  const [product] = await s.db.query<{ id: string }>(
    'SELECT p.id FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1',
    [OWNER],
  );
  const path = `/admin/v1/products/${product!.id}/activation`;
  await submit(s, owner, { ...REQUEST, legalAddress: 'Toshkent' });
  ok(await s.admin('GET', '/admin/v1/activations?status=submitted'), 200, 'activations');
  ok(await s.admin('GET', path), 200, 'activation');
  ok(await s.admin('POST', `${path}/reject`, { reason: 'The legal address is not the one in the registration certificate: write it as the certificate does' }), 200, 'reject');
  await submit(s, owner, REQUEST);
  ok(await s.admin('POST', `${path}/approve`), 200, 'approve');
}
