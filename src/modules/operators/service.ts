// Tolov's staff and what they do. An operator is a login of the accounts module (its password, second factor,
// sessions and throttles, the dashboard's own code) with a role, and no merchant account. The first is created with
// the operator token; the next are invited by an admin. The second factor is mandatory: a session that has not proved
// it opens only the page that sets it up. Every operator action is written to an append-only audit log, in the
// transaction of the change it records.
import type { Db, Transaction } from '../../db/types.js';
import { ApiError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { sha256 } from '../../lib/secrets.js';
import type { AccountsService, Throttled } from '../accounts/service.js';
import { newToken } from '../accounts/service.js';
import type { AccountMailer } from '../accounts/mailer.js';
import type { MailLang } from '../accounts/mail-texts.js';
import * as store from './store.js';
import type { OperatorActor, OperatorRole, OperatorSessionRow } from './store.js';

export type { OperatorActor, OperatorRole } from './store.js';

const INVITATION_TTL_SECONDS = 7 * 86_400;
const AUDIT_PAGE_MAX = 100;

export type OperatorLogIn = { ok: true; token: string; next: 'verify' | 'set_up' } | { ok: false; reason: 'wrong_password' } | Throttled;

/** A signed-in operator, as the console's pages act for them. */
export interface OperatorSession extends OperatorSessionRow {
  token: string;
}

/** Removing the last admin would leave no one to invite or decide: the change is undone. */
class LastAdmin extends Error {}
/** The invited e-mail has a login since the invitation was sent: the acceptance is undone. */
class EmailTaken extends Error {}

export const consoleActor = (session: Pick<OperatorSession, 'user_id'>): OperatorActor => ({ operatorId: session.user_id, via: 'console' });
export const API_ACTOR: OperatorActor = { operatorId: null, via: 'api' };

export class OperatorsService {
  constructor(
    private readonly db: Db,
    private readonly accounts: AccountsService,
    private readonly mailer: AccountMailer,
  ) {}

  /**
   * The first operator, created with the operator token: once there is one, the next are invited by an admin from the
   * console, so that the shared token cannot make console logins behind the staff's back.
   */
  async createFirst(input: { email: string; password: string; role: OperatorRole }): Promise<store.OperatorRow> {
    // The first invites the others: an operator who could not would leave a console no one can staff.
    if (input.role !== 'admin') throw new ApiError('VALIDATION_ERROR', 'The first operator is an admin: support operators are invited by an admin', { param: 'role' });
    return this.db.transaction(async (tx) => {
      await store.lockOperators(tx);
      if ((await store.countOperators(tx)) > 0) throw new ApiError('INVALID_STATE', 'There are operators already: an admin invites the next one from the console');
      const userId = await this.accounts.insertLogin(tx, input.email, input.password);
      if (userId === null) throw new ApiError('INVALID_STATE', 'This e-mail has a Tolov login already: an operator has a login of its own');
      await store.insertOperator(tx, { userId, role: input.role, invitedBy: null });
      await store.insertAudit(tx, API_ACTOR, { action: 'operator.created', target: userId, detail: `${input.email} as ${input.role}` });
      return { user_id: userId, email: input.email, role: input.role, totp_enabled: false, created_at: new Date() };
    });
  }

  /**
   * Checks the password as the dashboard does (same throttles); a login that is no operator's gets the wrong password's
   * answer. The session it opens waits for the second factor, or, without one yet, opens only its set-up.
   */
  async logIn(input: { email: string; password: string; address: string }): Promise<OperatorLogIn> {
    const checked = await this.accounts.checkPassword(input.email, input.password, input.address);
    if (!checked.ok) return checked.result;
    const { user } = checked;
    if (!(await store.isOperator(this.db, user.id))) return { ok: false, reason: 'wrong_password' };
    if (user.totp_sealed !== null) return { ok: true, token: await this.accounts.openSession(user.id, null, 'awaiting_second_factor'), next: 'verify' };
    return { ok: true, token: await this.accounts.openSession(user.id, null, 'password'), next: 'set_up' };
  }

  async session(token: string): Promise<OperatorSession | undefined> {
    const row = await store.findOperatorSession(this.db, sha256(token));
    return row && { ...row, token };
  }

  /** The session of a right password that waits for its second factor: an operator's only. */
  async pendingSession(token: string) {
    const pending = await this.accounts.pendingSession(token);
    return pending?.account_id === null ? pending : undefined;
  }

  async completeSecondFactor(token: string, code: string) {
    if (!(await this.pendingSession(token))) return { ok: false, reason: 'expired' } as const;
    const result = await this.accounts.completeSecondFactor(token, code);
    if (result.ok) await store.insertAudit(this.db, { operatorId: result.userId, via: 'console' }, { action: 'operator.logged_in', target: result.userId });
    return result;
  }

  beginSecondFactor(session: OperatorSession) {
    return this.accounts.beginSecondFactor(session.email);
  }

  /** Sets up the operator's second factor; the session that did it has proved it, and the login's others end. */
  async enableSecondFactor(session: OperatorSession, sealedSeed: string, code: string) {
    const audit = (tx: Transaction) => store.insertAudit(tx, consoleActor(session), { action: 'operator.second_factor_enabled', target: session.user_id });
    return this.accounts.enableSecondFactor({ token: session.token, actor: { userId: session.user_id, livemode: null } }, sealedSeed, code, audit);
  }

  async logOut(session: OperatorSession): Promise<void> {
    await this.accounts.endSession(session.token);
    await store.insertAudit(this.db, consoleActor(session), { action: 'operator.logged_out', target: session.user_id });
  }

  /** The operators, oldest first: the first OPERATORS_LISTED_MAX, and whether there are more. */
  async list(): Promise<{ rows: store.OperatorRow[]; hasMore: boolean }> {
    const rows = await store.listOperators(this.db, store.OPERATORS_LISTED_MAX + 1);
    return { rows: rows.slice(0, store.OPERATORS_LISTED_MAX), hasMore: rows.length > store.OPERATORS_LISTED_MAX };
  }

  invitations() {
    return store.listOpenInvitations(this.db);
  }

  /**
   * Mails an invitation: only the reader of the address chooses the password of the login it makes. The admin confirms
   * it with their authenticator's current `code`: a new operator is a new way in, which a session alone (perhaps
   * stolen) must not open.
   */
  async invite(
    admin: OperatorSession,
    invitee: { email: string; role: OperatorRole; lang: MailLang },
    code: string,
  ): Promise<{ ok: true } | { ok: false; reason: 'email_taken' | 'second_factor_required' | 'wrong_code' } | Throttled> {
    if (await this.accounts.findLogin(invitee.email)) return { ok: false, reason: 'email_taken' };
    const proved = await this.accounts.confirmSecondFactor({ actor: { userId: admin.user_id }, secondFactorProved: admin.second_factor }, code);
    if (!proved.ok) return proved;
    const token = newToken();
    await this.act(consoleActor(admin), { action: 'operator.invited', target: invitee.email, detail: `as ${invitee.role}` }, async (tx) => {
      const { email, role } = invitee;
      await store.insertInvitation(tx, { tokenHash: sha256(token), id: newId('inv'), email, role, invitedBy: admin.user_id, ttlSeconds: INVITATION_TTL_SECONDS });
      this.mailer.queue(tx, invitee.lang, email, { kind: 'operator_invitation', link: this.mailer.link(`/operator/invite/${token}`), role });
    });
    this.mailer.sendNow();
    return { ok: true };
  }

  invitation(token: string) {
    return store.findOpenInvitation(this.db, sha256(token));
  }

  /**
   * Removes an operator, by an admin: their sessions end at once, the invitations they sent are revoked, and their login
   * opens nothing from then on. The console always keeps an admin.
   */
  async remove(admin: OperatorSession, userId: string): Promise<{ ok: true } | { ok: false; reason: 'not_found' | 'last_admin' }> {
    return this.db.transaction(async (tx) => {
      await store.lockOperators(tx);
      const removed = await store.deleteOperator(tx, userId);
      if (!removed) return { ok: false, reason: 'not_found' } as const;
      if (removed.role === 'admin' && (await store.countOperators(tx, 'admin')) === 0) throw new LastAdmin();
      await this.accounts.endSessionsOf(tx, userId);
      store.revokeInvitationsOf(tx, userId, removed.email);
      await store.insertAudit(tx, consoleActor(admin), { action: 'operator.removed', target: userId, detail: `${removed.email} (${removed.role})` });
      return { ok: true } as const;
    }).catch((error: unknown) => {
      if (error instanceof LastAdmin) return { ok: false, reason: 'last_admin' } as const;
      throw error;
    });
  }

  /** Revokes an open invitation; recorded only when there was one to revoke. */
  revokeInvitation(admin: OperatorSession, id: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      if (!(await store.revokeInvitation(tx, id))) return false;
      await store.insertAudit(tx, consoleActor(admin), { action: 'operator.invitation_revoked', target: id });
      return true;
    });
  }

  /**
   * Accepts an invitation with the password chosen now, once: the login, its role and a session that opens only the
   * second factor's set-up.
   */
  async accept(token: string, password: string, address: string): Promise<{ ok: true; token: string } | { ok: false; reason: 'not_found' | 'email_taken' } | Throttled> {
    const turn = await this.accounts.newPasswordTurn(address);
    if (!turn.ok) return turn;
    return this.db.transaction(async (tx) => {
      const invitation = await store.acceptInvitation(tx, sha256(token));
      if (!invitation) return { ok: false, reason: 'not_found' } as const;
      const userId = await this.accounts.insertLogin(tx, invitation.email, password);
      // The invitation stays open: the transaction is undone, and an admin may revoke it.
      if (userId === null) throw new EmailTaken();
      await store.insertOperator(tx, { userId, role: invitation.role, invitedBy: invitation.invited_by });
      await store.insertAudit(tx, { operatorId: userId, via: 'console' }, { action: 'operator.joined', target: userId, detail: `${invitation.email} as ${invitation.role}` });
      return { ok: true, token: await this.accounts.openSession(userId, null, 'password', tx) } as const;
    }).catch((error: unknown) => {
      if (error instanceof EmailTaken) return { ok: false, reason: 'email_taken' } as const;
      throw error;
    });
  }

  /** Runs an operator's change and writes its audit entry in one transaction: the change is recorded, or not made. */
  act<T>(actor: OperatorActor, entry: { action: string; target: string | null; detail?: string | null }, change: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.actOn(actor, entry.action, change, () => entry);
  }

  /** As `act`, for a change whose entry names what the change made (a new product's id). */
  actOn<T>(actor: OperatorActor, action: string, change: (tx: Transaction) => Promise<T>, entryOf: (result: T) => { target: string | null; detail?: string | null }): Promise<T> {
    return this.db.transaction(async (tx) => {
      const result = await change(tx);
      await store.insertAudit(tx, actor, { action, ...entryOf(result) });
      return result;
    });
  }

  /** Records a read worth knowing who made (a support search), outside any change. */
  recordRead(actor: OperatorActor, entry: { action: string; target: string | null; detail?: string | null }): Promise<void> {
    return store.insertAudit(this.db, actor, entry);
  }

  /** The audit log, newest first: a page of at most AUDIT_PAGE_MAX before entry `before`, optionally of one target. */
  async auditLog(query: { before?: bigint; target?: string | null } = {}): Promise<{ rows: store.AuditRow[]; hasMore: boolean }> {
    const rows = await store.listAudit(this.db, { before: query.before ?? BigInt(Number.MAX_SAFE_INTEGER), target: query.target ?? null, limit: AUDIT_PAGE_MAX + 1 });
    return { rows: rows.slice(0, AUDIT_PAGE_MAX), hasMore: rows.length > AUDIT_PAGE_MAX };
  }
}
