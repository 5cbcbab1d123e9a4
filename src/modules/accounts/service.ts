// Merchant accounts for the dashboard: log-in throttled by the database, sessions kept in the database (revocable and
// shared by every process), the optional second factor, the team and its roles, invitations mailed to the invitee,
// and the audit log. Sign-up and password resets, which mail links, are in links.ts.
import { randomBytes } from 'node:crypto';
import type { Db, Queryable, Transaction } from '../../db/types.js';
import { newId } from '../../core/ids.js';
import { sha256 } from '../../lib/secrets.js';
import type { Sealer } from '../../lib/sealing.js';
import type { Throttles } from '../throttles/service.js';
import type { AccountMailer } from './mailer.js';
import type { MailLang } from './mail-texts.js';
import { hashPassword, UNKNOWN_USER_HASH, verifyPassword } from './passwords.js';
import { emailSubject, INVITATIONS_ACCOUNT, INVITATIONS_EMAIL, NEW_PASSWORD_ADDRESS, PASSWORD_ACCOUNT, PASSWORD_ADDRESS, SECOND_FACTOR_USER } from './policies.js';
import { looksLikeRecoveryCode, newRecoveryCodes, newSeed, recoveryHash, seedShown, stepOf } from './second-factor.js';
import * as store from './store.js';
import type { Role, SessionRow } from './store.js';
import type { AuditEntry, AuditTrail } from '../../core/commands.js';

export const SESSION_TTL_SECONDS = 12 * 3600;
/** How long a right password waits for its second factor. */
const SECOND_FACTOR_TTL_SECONDS = 5 * 60;
const INVITATION_TTL_SECONDS = 7 * 86_400;
const AUDIT_PAGE_MAX = 100;

export const newToken = () => randomBytes(32).toString('base64url');

export type Throttled = { ok: false; reason: 'throttled'; retryAfterSeconds: number };

export type LogIn = { ok: true; token: string; secondFactor: boolean } | { ok: false; reason: 'wrong_password' } | Throttled;

/** A completed second step names the login it opened a session for (the console audits it as the operator's). */
export type SecondFactor = { ok: true; token: string; userId: string } | { ok: false; reason: 'wrong_code' | 'expired' } | Throttled;

export type PasswordCheck = { ok: true } | { ok: false; reason: 'wrong_password' } | Throttled;

export type TeamChange = { ok: true } | { ok: false; reason: 'last_owner' | 'not_found' | 'already_member' | 'second_factor_required' };

/** What a session proved: a password still waiting for its second factor, a password alone, or both. */
export type Proof = 'awaiting_second_factor' | 'password' | 'second_factor';

/** Who acts in the dashboard, for the audit log. */
export interface Actor {
  userId: string;
  accountId: string;
  livemode: boolean;
}

/** A signed-in session, as changes of the user's own security need it. */
export interface SignedSession {
  token: string;
  actor: Actor;
  /** Whether the session passed the user's second factor. */
  secondFactorProved: boolean;
}

/** The e-mail of an invitation has a login since the invitation was sent: the join is undone. */
class LoginExists extends Error {}

export class AccountsService implements AuditTrail {
  constructor(
    private readonly db: Db,
    private readonly sealer: Sealer,
    private readonly throttles: Throttles,
    private readonly mailer: AccountMailer,
  ) {}

  /**
   * Checks a password once the client's address and the e-mail have given it a turn. An unknown e-mail is throttled,
   * takes as long and says the same as a known one with a wrong password.
   */
  async logIn(input: { email: string; password: string; address: string }): Promise<LogIn> {
    const checked = await this.checkPassword(input.email, input.password, input.address);
    if (!checked.ok) return checked.result;
    const { user } = checked;
    // A login of no account (an operator's) opens nothing here: the same answer as a wrong password.
    const accountId = await store.firstAccountOf(this.db, user.id);
    if (accountId === undefined) return { ok: false, reason: 'wrong_password' };
    return this.passwordSession(user, accountId);
  }

  /** The session a right password opens in `accountId`: with a second factor, only the page that asks for it, for a few minutes. */
  private async passwordSession(user: store.UserRow, accountId: string): Promise<LogIn> {
    if (user.totp_sealed !== null) return { ok: true, token: await this.openSession(user.id, accountId, 'awaiting_second_factor'), secondFactor: true };
    await store.insertAudit(this.db, { accountId, userId: user.id, action: 'user.logged_in', target: null, livemode: null });
    return { ok: true, token: await this.openSession(user.id, accountId, 'password'), secondFactor: false };
  }

  /**
   * The one place a password is checked, after turns of the address and the e-mail; a right one gives the address its
   * turn back and clears the e-mail's failures, a wrong one leaves them counted. The operators' console logs in here too.
   */
  async checkPassword(email: string, password: string, address: string): Promise<{ ok: true; user: store.UserRow } | { ok: false; result: Exclude<PasswordCheck, { ok: true }> }> {
    const turn = await this.throttles.takeAll([
      [PASSWORD_ADDRESS, address],
      [PASSWORD_ACCOUNT, emailSubject(email)],
    ]);
    if (!turn.ok) return { ok: false, result: { ok: false, reason: 'throttled', retryAfterSeconds: turn.retryAfterSeconds } };
    const user = await store.findUserByEmail(this.db, email);
    const valid = await verifyPassword(password, user?.password_hash ?? UNKNOWN_USER_HASH);
    if (!user || !valid) return { ok: false, result: { ok: false, reason: 'wrong_password' } };
    await this.throttles.giveBack(turn.taken[0]!);
    await this.throttles.clear(PASSWORD_ACCOUNT, emailSubject(email));
    return { ok: true, user };
  }

  /**
   * Whether `password` is the user's: the dashboard asks again before it shows a secret or changes the user's own
   * security. Throttled as a log-in is, so that this is no way around its throttling.
   */
  async confirmPassword(userId: string, password: string, address: string): Promise<PasswordCheck> {
    const user = await store.findUser(this.db, userId);
    if (!user) return { ok: false, reason: 'wrong_password' };
    const checked = await this.checkPassword(user.email, password, address);
    return checked.ok ? { ok: true } : checked.result;
  }

  /** A new login with `password`, in the caller's transaction; null when the e-mail has one already. */
  async insertLogin(tx: Transaction, email: string, password: string): Promise<string | null> {
    const user = await store.insertUser(tx, { id: newId('usr'), email, passwordHash: await hashPassword(password) });
    return user?.id ?? null;
  }

  findLogin(email: string) {
    return store.findUserByEmail(this.db, email);
  }

  /** A turn to hash a new password for `address`, refused past its hourly share. */
  async newPasswordTurn(address: string): Promise<{ ok: true } | Throttled> {
    const turn = await this.throttles.takeAll([[NEW_PASSWORD_ADDRESS, address]]);
    return turn.ok ? { ok: true } : { ok: false, reason: 'throttled', retryAfterSeconds: turn.retryAfterSeconds };
  }

  /** The session of a right password that waits for its second factor. */
  pendingSession(token: string) {
    return store.findPendingSession(this.db, sha256(token));
  }

  /**
   * Completes a log-in with a code of the authenticator (each time step once) or a recovery code (each once), after a
   * turn of the user's second factor; the waiting session ends and a new one begins, one that proved the factor.
   */
  async completeSecondFactor(token: string, code: string): Promise<SecondFactor> {
    const pending = await store.findPendingSession(this.db, sha256(token));
    const user = pending ? await store.findUser(this.db, pending.user_id) : undefined;
    if (!pending || !user || user.totp_sealed === null) return { ok: false, reason: 'expired' };
    const turn = await this.throttles.takeAll([[SECOND_FACTOR_USER, user.id]]);
    if (!turn.ok) return { ok: false, reason: 'throttled', retryAfterSeconds: turn.retryAfterSeconds };
    const step = stepOf(this.sealer.open(user.totp_sealed), code.trim());
    const valid =
      step !== null ? await store.takeTotpStep(this.db, user.id, step) : looksLikeRecoveryCode(code) && (await store.takeRecoveryCode(this.db, user.id, recoveryHash(code)));
    if (!valid) return { ok: false, reason: 'wrong_code' };
    if (!(await store.takePendingSession(this.db, sha256(token)))) return { ok: false, reason: 'expired' };
    await this.throttles.clear(SECOND_FACTOR_USER, user.id);
    const how = step !== null ? 'authenticator' : 'recovery code';
    if (pending.account_id !== null) {
      await store.insertAudit(this.db, { accountId: pending.account_id, userId: user.id, action: 'user.logged_in', target: `second factor: ${how}`, livemode: null });
    }
    return { ok: true, token: await this.openSession(user.id, pending.account_id, 'second_factor'), userId: user.id };
  }

  /**
   * Proves the second factor again, for a change that decides where money goes (the payout account): a code of the
   * authenticator (recovery codes are for logging in), from a session that proved the factor at log-in; each time step
   * once, and throttled as at log-in.
   */
  async confirmSecondFactor(
    session: Pick<SignedSession, 'secondFactorProved'> & { actor: { userId: string } },
    code: string,
  ): Promise<{ ok: true } | { ok: false; reason: 'second_factor_required' | 'wrong_code' } | Throttled> {
    if (!session.secondFactorProved) return { ok: false, reason: 'second_factor_required' };
    const user = await store.findUser(this.db, session.actor.userId);
    if (!user || user.totp_sealed === null) return { ok: false, reason: 'second_factor_required' };
    const turn = await this.throttles.takeAll([[SECOND_FACTOR_USER, user.id]]);
    if (!turn.ok) return { ok: false, reason: 'throttled', retryAfterSeconds: turn.retryAfterSeconds };
    const step = stepOf(this.sealer.open(user.totp_sealed), code.trim());
    if (step === null || !(await store.takeTotpStep(this.db, user.id, step))) return { ok: false, reason: 'wrong_code' };
    await this.throttles.clear(SECOND_FACTOR_USER, user.id);
    return { ok: true };
  }

  /** A seed to set up an authenticator with; sealed for the confirming form, since nothing is stored until then. */
  async beginSecondFactor(email: string) {
    const seed = await newSeed(email);
    return { ...seed, sealed: this.sealer.seal(seed.base32) };
  }

  /**
   * The set-up of a seed the confirming form sent back sealed, to show again after a refusal: the app has scanned it
   * already. Undefined for a sealed text this service did not make.
   */
  async resumeSecondFactor(email: string, sealedSeed: string) {
    let base32: string;
    try {
      base32 = this.sealer.open(sealedSeed);
    } catch {
      return undefined;
    }
    return { ...(await seedShown(base32, email)), sealed: sealedSeed };
  }

  /**
   * Turns the second factor on once a code of the new seed proves the app has it; returns the recovery codes. A user
   * who has one already must turn it off first. The session that turned it on counts as having proved it; the user's
   * other sessions, which did not, end.
   */
  async enableSecondFactor(
    session: { token: string; actor: { userId: string; livemode: boolean | null } },
    sealedSeed: string,
    code: string,
    /** A record of its own the caller writes in the change's transaction (the operators' audit log). */
    record: (tx: Transaction) => Promise<void> = async () => {},
  ): Promise<{ ok: true; recoveryCodes: string[] } | { ok: false }> {
    let seed: string;
    try {
      seed = this.sealer.open(sealedSeed);
    } catch {
      return { ok: false };
    }
    const step = stepOf(seed, code.trim());
    if (step === null) return { ok: false };
    const { codes, hashes } = newRecoveryCodes();
    const { userId } = session.actor;
    const enabled = await this.db.transaction(async (tx) => {
      if (!(await store.setSecondFactor(tx, userId, { totpSealed: this.sealer.seal(seed), recoveryHashes: hashes }))) return false;
      await store.takeTotpStep(tx, userId, step);
      await store.markSecondFactorProved(tx, sha256(session.token));
      await store.revokeSessionsOf(tx, userId, sha256(session.token));
      await this.auditUser(session.actor, 'user.second_factor_enabled', tx);
      await record(tx);
      return true;
    });
    return enabled ? { ok: true, recoveryCodes: codes } : { ok: false };
  }

  /**
   * Turns the second factor off: only from a session that proved it (a session made before it was on cannot), and
   * after the password.
   */
  async disableSecondFactor(session: SignedSession, password: string, address: string): Promise<PasswordCheck | { ok: false; reason: 'second_factor_required' }> {
    if (!session.secondFactorProved) return { ok: false, reason: 'second_factor_required' };
    const checked = await this.confirmPassword(session.actor.userId, password, address);
    if (!checked.ok) return checked;
    await this.db.transaction(async (tx) => {
      await store.clearSecondFactor(tx, session.actor.userId);
      await this.auditUser(session.actor, 'user.second_factor_disabled', tx);
    });
    return { ok: true };
  }

  /** Seals TOTP seeds sealed under a previous key under the current one, a batch at a time (run at start). */
  async sealStoredSeeds(batchMax = 500): Promise<number> {
    let sealed = 0;
    for (;;) {
      const rows = await store.seedsToSeal(this.db, this.sealer.currentKeyId, batchMax);
      for (const row of rows) await store.storeSeed(this.db, row.id, this.sealer.seal(this.sealer.open(row.totp_sealed)));
      sealed += rows.length;
      if (rows.length < batchMax) return sealed;
    }
  }

  recoveryCodesLeft(userId: string): Promise<number> {
    return store.recoveryCodesLeft(this.db, userId);
  }

  /**
   * A new session: always a new token, so that a token planted before log-in never becomes a session. Without an
   * account, an operator's.
   */
  async openSession(userId: string, accountId: string | null, proof: Proof, db: Queryable = this.db): Promise<string> {
    const token = newToken();
    const pending = proof === 'awaiting_second_factor';
    await store.insertSession(db, {
      tokenHash: sha256(token),
      userId,
      accountId,
      csrfToken: newToken(),
      ttlSeconds: pending ? SECOND_FACTOR_TTL_SECONDS : SESSION_TTL_SECONDS,
      secondFactorPending: pending,
      secondFactor: proof === 'second_factor',
    });
    return token;
  }

  session(token: string): Promise<SessionRow | undefined> {
    return store.findSession(this.db, sha256(token));
  }

  async logOut(token: string, actor: Actor): Promise<void> {
    await this.endSession(token);
    await this.audit(actor, 'user.logged_out', null);
  }

  endSession(token: string): Promise<void> {
    return store.revokeSession(this.db, sha256(token));
  }

  /** Ends every session of the login, in the caller's transaction (an operator removed from the console). */
  endSessionsOf(tx: Transaction, userId: string): Promise<void> {
    return store.revokeSessionsOf(tx, userId, null);
  }

  setMode(token: string, livemode: boolean): Promise<void> {
    return store.setSessionMode(this.db, sha256(token), livemode);
  }

  /** Deletes what no longer counts (ended sessions and links, spent throttles, old mail), a bounded batch of each. */
  async deleteEnded(batchMax: number): Promise<number> {
    const counts = [
      await store.deleteEnded(this.db, batchMax),
      await this.throttles.deleteExpired(batchMax),
      await this.mailer.deleteOld(batchMax),
    ];
    return counts.reduce((sum, count) => sum + count, 0);
  }

  // The team.

  members(accountId: string) {
    return store.listMembers(this.db, accountId);
  }

  invitations(accountId: string) {
    return store.listOpenInvitations(this.db, accountId);
  }

  /**
   * Mails an invitation to `email`: only its reader gets the link, so that no owner can make a login for an address
   * they cannot read, nor learn from the link whether it has a login. Throttled per account, and per account and address.
   * An invitation as owner needs the change `confirmed` (see `ownersKept`).
   */
  async invite(actor: Actor, invitee: { email: string; role: Role; lang: MailLang }, confirmed: boolean): Promise<TeamChange | Throttled> {
    if (invitee.role === 'owner' && !confirmed) return { ok: false, reason: 'second_factor_required' };
    const existing = await store.findUserByEmail(this.db, invitee.email);
    if (existing && (await store.findMember(this.db, actor.accountId, existing.id))) return { ok: false, reason: 'already_member' };
    const turn = await this.throttles.takeAll([
      [INVITATIONS_ACCOUNT, actor.accountId],
      [INVITATIONS_EMAIL, `${actor.accountId}:${emailSubject(invitee.email)}`],
    ]);
    if (!turn.ok) return { ok: false, reason: 'throttled', retryAfterSeconds: turn.retryAfterSeconds };
    const token = newToken();
    await this.db.transaction(async (tx) => {
      const id = newId('inv');
      const { email, role } = invitee;
      await store.insertInvitation(tx, { tokenHash: sha256(token), id, accountId: actor.accountId, email, role, invitedBy: actor.userId, ttlSeconds: INVITATION_TTL_SECONDS });
      const account = await store.accountName(tx, actor.accountId);
      this.mailer.queue(tx, invitee.lang, email, { kind: 'invitation', link: this.mailer.link(`/dashboard/invite/${token}`), account, role });
      await this.audit(actor, 'team.invited', `${email} as ${role}`, tx);
    });
    this.mailer.sendNow();
    return { ok: true };
  }

  /**
   * An open invitation; whether a login has its e-mail (then it is joined from that login's session), and whether that
   * login is idle, in no account (then it is joined by its password on the link: it cannot log in).
   */
  async invitation(token: string) {
    const invitation = await store.findOpenInvitation(this.db, sha256(token));
    if (!invitation) return undefined;
    const login = await store.findUserByEmail(this.db, invitation.email);
    return { ...invitation, hasLogin: login !== undefined, idleLogin: login !== undefined && (await store.loginIdle(this.db, login.id)) };
  }

  /**
   * Joins with an idle login (see `store.loginIdle`), which cannot log in: its password, typed on the link that came to
   * its address, proves both, checked and throttled as a log-in's. It is then logged in as `logIn` does, its second
   * factor asked for if it has one. A login of an account joins from its own session instead.
   */
  async joinWithIdleLogin(token: string, password: string, address: string): Promise<LogIn | { ok: false; reason: 'not_found' | 'not_idle' }> {
    const invitation = await store.findOpenInvitation(this.db, sha256(token));
    if (!invitation) return { ok: false, reason: 'not_found' };
    const checked = await this.checkPassword(invitation.email, password, address);
    if (!checked.ok) return checked.result;
    const { user } = checked;
    const joined = await this.db.transaction(async (tx): Promise<{ accountId: string } | { ok: false; reason: 'not_found' | 'not_idle' }> => {
      if (!(await store.loginIdle(tx, user.id))) return { ok: false, reason: 'not_idle' };
      const taken = await store.acceptInvitation(tx, sha256(token));
      if (!taken) return { ok: false, reason: 'not_found' };
      await this.addMember(tx, taken, user.id);
      return { accountId: taken.account_id };
    });
    return 'accountId' in joined ? this.passwordSession(user, joined.accountId) : joined;
  }

  /** Joins as a new login with `password`: the link came by mail to the invited address, which proves it is theirs. */
  async joinAsNewUser(token: string, password: string, address: string): Promise<{ ok: true; token: string } | { ok: false; reason: 'not_found' | 'has_login' } | Throttled> {
    const invitation = await this.invitation(token);
    if (!invitation) return { ok: false, reason: 'not_found' };
    if (invitation.hasLogin) return { ok: false, reason: 'has_login' };
    const turn = await this.newPasswordTurn(address);
    if (!turn.ok) return turn;
    const passwordHash = await hashPassword(password);
    try {
      const joined = await this.db.transaction(async (tx) => {
        const taken = await store.acceptInvitation(tx, sha256(token));
        if (!taken) return null;
        const user = await store.insertUser(tx, { id: newId('usr'), email: taken.email, passwordHash });
        if (!user) throw new LoginExists();
        await this.addMember(tx, taken, user.id);
        return { token: await this.openSession(user.id, taken.account_id, 'password', tx) };
      });
      return joined ? { ok: true, ...joined } : { ok: false, reason: 'not_found' };
    } catch (error) {
      if (error instanceof LoginExists) return { ok: false, reason: 'has_login' };
      throw error;
    }
  }

  /**
   * Joins the invitation's account with the signed-in login it was sent to. The session moves to the joined account:
   * a new one, proving what the old one proved, which ends.
   */
  async joinSignedIn(token: string, session: SignedSession & { email: string }): Promise<{ ok: true; token: string } | { ok: false; reason: 'not_found' }> {
    const joined = await this.db.transaction(async (tx) => {
      const invitation = await store.findOpenInvitation(tx, sha256(token));
      if (invitation?.email !== session.email) return null;
      const taken = await store.acceptInvitation(tx, sha256(token));
      if (!taken) return null;
      await this.addMember(tx, taken, session.actor.userId);
      await store.revokeSession(tx, sha256(session.token));
      return this.openSession(session.actor.userId, taken.account_id, session.secondFactorProved ? 'second_factor' : 'password', tx);
    });
    return joined === null ? { ok: false, reason: 'not_found' } : { ok: true, token: joined };
  }

  private async addMember(tx: Transaction, invitation: store.InvitationRow, userId: string): Promise<void> {
    await store.insertMembership(tx, { accountId: invitation.account_id, userId, role: invitation.role });
    await store.insertAudit(tx, { accountId: invitation.account_id, userId, action: 'team.joined', target: `${invitation.email} as ${invitation.role}`, livemode: null });
  }

  async revokeInvitation(actor: Actor, id: string): Promise<TeamChange> {
    return this.db.transaction(async (tx) => {
      if (!(await store.revokeInvitation(tx, actor.accountId, id))) return { ok: false, reason: 'not_found' };
      await this.audit(actor, 'team.invitation_revoked', id, tx);
      return { ok: true };
    });
  }

  /** Changes a member's role; an account always keeps an owner. A member who is no owner any more has no open invitation. */
  async changeRole(actor: Actor, userId: string, role: Role, confirmed: boolean): Promise<TeamChange> {
    return this.ownersKept(actor, userId, { staysOwner: role === 'owner', confirmed }, async (tx, member) => {
      await store.updateRole(tx, actor.accountId, userId, role);
      if (role !== 'owner') await store.revokeInvitationsOf(tx, actor.accountId, { userId, email: null });
      await this.audit(actor, 'team.role_changed', `${member.email}: ${member.role} → ${role}`, tx);
    });
  }

  /**
   * Removes a member, ends their sessions in the account and revokes the account's open invitations they sent or were
   * sent; an account always keeps an owner.
   */
  async removeMember(actor: Actor, userId: string, confirmed: boolean): Promise<TeamChange> {
    return this.ownersKept(actor, userId, { staysOwner: false, confirmed }, async (tx, member) => {
      await store.deleteMembership(tx, actor.accountId, userId);
      await store.revokeInvitationsOf(tx, actor.accountId, { userId, email: member.email });
      await this.audit(actor, 'team.removed', member.email, tx);
    });
  }

  /**
   * Runs a change of a member under the account's lock, refusing one that would leave no owner. A change that makes,
   * unmakes or removes an owner needs it `confirmed` by the acting owner's second factor, as a payout account's change
   * does: an owner can send the money elsewhere, so a session alone (perhaps stolen) must not make one.
   */
  private ownersKept(
    actor: Actor,
    userId: string,
    { staysOwner, confirmed }: { staysOwner: boolean; confirmed: boolean },
    change: (tx: Transaction, member: store.MemberRow) => Promise<void>,
  ): Promise<TeamChange> {
    return this.db.transaction(async (tx) => {
      await store.lockAccount(tx, actor.accountId);
      const member = await store.findMember(tx, actor.accountId, userId);
      if (!member) return { ok: false, reason: 'not_found' } as const;
      if (member.role === 'owner' && !staysOwner && (await store.countOwners(tx, actor.accountId)) <= 1) return { ok: false, reason: 'last_owner' } as const;
      if ((member.role === 'owner' || staysOwner) && !confirmed) return { ok: false, reason: 'second_factor_required' } as const;
      await change(tx, member);
      return { ok: true } as const;
    });
  }

  /** The audit trail of the capabilities' commands: a dashboard user's change, in the change's transaction. */
  record(tx: Transaction, entry: AuditEntry): Promise<void> {
    return store.insertAudit(tx, entry);
  }

  /** Records what a user did to the account itself; in the transaction of the change when there is one. */
  audit(actor: Actor, action: string, target: string | null, db: Queryable = this.db): Promise<void> {
    return store.insertAudit(db, { accountId: actor.accountId, userId: actor.userId, action, target, livemode: actor.livemode });
  }

  /** Records a change of the user's own (their password, their second factor) in every account they belong to. */
  auditUser(actor: { userId: string; livemode: boolean | null }, action: string, db: Queryable): Promise<void> {
    return store.insertAuditForUser(db, { userId: actor.userId, action, livemode: actor.livemode });
  }

  /** The account's audit log, newest first, a page of at most AUDIT_PAGE_MAX before entry `before`. */
  async auditLog(accountId: string, before = Number.MAX_SAFE_INTEGER): Promise<{ rows: store.AuditRow[]; hasMore: boolean }> {
    const rows = await store.listAudit(this.db, accountId, before, AUDIT_PAGE_MAX + 1);
    return { rows: rows.slice(0, AUDIT_PAGE_MAX), hasMore: rows.length > AUDIT_PAGE_MAX };
  }
}
