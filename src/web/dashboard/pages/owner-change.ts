// A change of who owns the account (an owner invited, made, unmade or removed) is confirmed with the acting owner's
// second factor: an owner can send the account's money elsewhere, so a session alone, perhaps stolen, cannot make one.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccountsService } from '../../../modules/accounts/service.js';
import { dashOf, field, sessionOf, signedIn, throttled, type Dash } from '../context.js';
import { html, type Html } from '../../html.js';
import { csrfField, notice, page } from '../layout.js';
import type { Form } from '../deps.js';

/** A form's change, to be posted again with the code: where it goes, its fields, and what it does, in words. */
export interface OwnerChange {
  action: string;
  fields: Record<string, string>;
  summary: string;
}

export type Confirmation = { confirmed: boolean } | { status: number; error: string };

/**
 * Whether the form confirmed its change with the acting owner's code. Without a code it is not confirmed; a code that is
 * not right, or a session that did not pass the second factor, is refused with why.
 */
export async function confirmationOf(accounts: AccountsService, request: FastifyRequest<{ Body: Form }>, reply: FastifyReply): Promise<Confirmation> {
  const code = field(request.body, 'code');
  if (code === '') return { confirmed: false };
  const dash = dashOf(request);
  const proved = await accounts.confirmSecondFactor(sessionOf(signedIn(request)), code);
  if (proved.ok) return { confirmed: true };
  if (proved.reason === 'throttled') return throttled(reply, dash, proved.retryAfterSeconds);
  if (proved.reason === 'second_factor_required') return { status: 403, error: dash.t('ownerChangeNeedsSecondFactor') };
  return { status: 401, error: dash.t('changeCodeWrong') };
}

/** The page that asks for the code of a change that needs it, with why the last try was refused, if it was. */
export function ownerChangePage(dash: Dash, change: OwnerChange, error?: string): Html {
  const { t } = dash;
  const hidden = Object.entries(change.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  const body = html`${notice('error', error)}<section class="card narrow" aria-labelledby="owner-change-summary">
<p>${t('ownerChangeExplained')}</p><p id="owner-change-summary"><strong>${change.summary}</strong></p>
<form class="stack" method="post" action="${change.action}">${csrfField(dash)}${hidden}
  <label for="owner-change-code">${t('authenticationCode')}</label>
  <input id="owner-change-code" name="code" required maxlength="6" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}">
  <button type="submit" class="primary">${t('ownerChangeConfirm')}</button>
</form>
<p><a href="/dashboard/team">${t('ownerChangeCancel')}</a></p></section>`;
  return page(dash, { title: t('ownerChangeTitle'), path: '/dashboard/team', section: 'team', body });
}
