// The password asked again before a secret is shown or made (a webhook secret revealed or rolled, a live key made or
// rolled): whoever is at a signed-in browser must not learn one from the session alone.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccountsService } from '../../../modules/accounts/service.js';
import { actorOf, dashOf, signedIn, throttled, typedPassword } from '../context.js';
import type { Form } from '../deps.js';
import type { MessageKey } from '../i18n.js';
import type { Html } from '../../html.js';
import { sendPage } from '../layout.js';

/**
 * Checks the form's password, throttled as a log-in's. True once it is right; otherwise the page `again` makes is sent
 * with why (a wrong password, audited as `refused.action` on `refused.target`: the owners see the guessing), and false.
 */
export async function passwordAgain(
  accounts: AccountsService,
  { request, reply }: { request: FastifyRequest; reply: FastifyReply },
  refused: { action: string; target: string | null; message: MessageKey },
  again: (error: string) => Promise<Html>,
): Promise<boolean> {
  const signed = signedIn(request);
  const checked = await accounts.confirmPassword(signed.session.user_id, typedPassword(request.body as Form), request.ip);
  if (checked.ok) return true;
  if (checked.reason === 'throttled') {
    const { status, error } = throttled(reply, dashOf(request), checked.retryAfterSeconds);
    sendPage(reply, await again(error), status);
    return false;
  }
  await accounts.audit(actorOf(signed), refused.action, refused.target);
  sendPage(reply, await again(dashOf(request).t(refused.message)), 401);
  return false;
}
