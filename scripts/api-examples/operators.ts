// Tolov's staff: the first operator made with the operator token, the operators listed, a support search, and the
// audit log of what the operator token did.
import { Recorder } from './recorder.js';

const ok = Recorder.expect;

/** The operators, and a support search for a payment by its id; `paymentId` is one of the story's payments. */
export async function operatorsAreMade(s: Recorder, paymentId: string): Promise<void> {
  ok(await s.admin('POST', '/admin/v1/operators', { email: 'aziza@tolov.uz', password: 'a long operator passphrase', role: 'admin' }), 201, 'operator');
  ok(await s.admin('GET', '/admin/v1/operators'), 200, 'operators');
  ok(await s.admin('GET', '/admin/v1/products?q=chorsu'), 200, 'products');
  ok(await s.admin('GET', `/admin/v1/search?q=${paymentId}`), 200, 'search');
  ok(await s.admin('GET', '/admin/v1/audit_log'), 200, 'audit');
}
