// Merchant accounts for the dashboard: sign-up, log-in throttled by the database, sessions kept in the database (revocable and
// shared by every process), the team and its roles, invitations by one-time link, and the audit log.
import { randomBytes } from 'node:crypto';
import type { Db, Queryable, Transaction } from '../../db/types.js';
import { newId } from '../../core/ids.js';
import { sha256 } from '../../lib/secrets.js';
import type { ProductsService } from '../products/service.js';
import type { Sealer } from '../../lib/sealing.js';
import type { Mail } from '../mail/service.js';
import type { ThrottlePolicy, Throttles } from '../throttles/service.js';
import { composeMail, type AccountMail, type MailLang } from './mail-texts.js';
import { hashPassword, UNKNOWN_USER_HASH, verifyPassword } from './passwords.js';
import { looksLikeRecoveryCode, newRecoveryCodes, newSeed, recoveryHash, stepOf } from './second-factor.js';
import * as store from './store.js';
import type { Role, SessionRow } from './store.js';

export const SESSION_TTL_SECONDS = 12 * 3600;
/** How long a right password waits for its second factor. */
const SECOND_FACTOR_TTL_SECONDS = 5 * 60;
const INVITATION_TTL_SECONDS = 7 * 86_400;
const SIGNUP_TTL_SECONDS = 86_400;
const RESET_TTL_SECONDS = 30 * 60;
const AUDIT_PAGE_MAX = 100;

/** Password checks from one client address, whatever the account: 20 a minute; a right password gives its turn back. */
export const PASSWORD_ADDRESS: ThrottlePolicy = { name: 'password-address', windowSeconds: 60, free: 20, gapStepSeconds: 0, gapMaxSeconds: 0, waitMaxSeconds: 0 };
/**
 * Failed passwords of one e-mail, whether an account has it or not: 10 an hour at once, then slowed (each further
 * check 1 s later than the gap before, at most 20 s apart), so that guessing crawls and the right password still gets in.
 */
export const PASSWORD_ACCOUNT: ThrottlePolicy = { name: 'password-account', windowSeconds: 3600, free: 10, gapStepSeconds: 1, gapMaxSeconds: 20, waitMaxSeconds: 25 };
/** Second-factor codes of one user, counted apart from the password: 10 wrong in 15 minutes, then none until it ends. */
export const SECOND_FACTOR_USER: ThrottlePolicy = { name: 'second-factor', windowSeconds: 900, free: 10, gapStepSeconds: 0, gapMaxSeconds: 0, waitMaxSeconds: 0 };
/** New passwords hashed for one address (sign-ups, resets, changes, invitations accepted by new users): 10 an hour. */
export const NEW_PASSWORD_ADDRESS: ThrottlePolicy = { name: 'new-password-address', windowSeconds: 3600, free: 10, gapStepSeconds: 0, gapMaxSeconds: 0, waitMaxSeconds: 0 };
/** Password-reset requests from one address: 10 an hour. */
export const RESET_ADDRESS: ThrottlePolicy = { name: 'reset-address', windowSeconds: 3600, free: 10, gapStepSeconds: 0, gapMaxSeconds: 0, waitMaxSeconds: 0 };
/** Mail one e-mail may be sent at a stranger's request (sign-up links, reset links): 3 an hour. */
export const MAIL_PER_EMAIL: ThrottlePolicy = { name: 'mail-email', windowSeconds: 3600, free: 3, gapStepSeconds: 0, gapMaxSeconds: 0, waitMaxSeconds: 0 };

const newToken = () => randomBytes(32).toString('base64url');
/** An e-mail as a throttle's subject: its hash, so that the table names no one. */
const emailSubject = (email: string) => sha256(email).toString('hex');

type Throttled = { ok: false; reason: 'throttled'; retryAfterSeconds: number };

export type LogIn = { ok: true; token: string; secondFactor: boolean } | { ok: false; reason: 'wrong_password' } | Throttled;

export type SecondFactor = { ok: true; token: string } | { ok: false; reason: 'wrong_code' | 'expired' } | Throttled;

export type PasswordCheck = { ok: true } | { ok: false; reason: 'wrong_password' } | Throttled;

export type Joined = { ok: true; token: string; secondFactor: boolean } | { ok: false; reason: 'wrong_password' | 'not_found' } | Throttled;

export type TeamChange = { ok: true } | { ok: false; reason: 'last_owner' | 'not_found' | 'already_member' };

/** Who acts in the dashboard, for the audit log. */
export interface Actor {
  userId: string;
  accountId: string;
  livemode: boolean;
}

export class AccountsService {
  constructor(
    private readonly db: Db,
    private readonly products: ProductsService,
    private readonly sealer: Sealer,
    private readonly throttles: Throttles,
    private readonly mail: Mail,
    /** Where links in mail lead: TOLOV_CHECKOUT_URL. */
    private readonly publicUrl: string,
  ) {}

  /**
   * Starts a sign-up: the e-mail gets a link that finishes it, or, when it has a login already, a mail that says so. The
   * answer, and the work before it, are the same either way, so that sign-up tells no one who has an account.
   */
  async signUp(input: { email: string; password: string; businessName: string; address: string; lang: MailLang }): Promise<{ ok: true } | Throttled> {
    const turn = await this.throttles.takeAll([
      [NEW_PASSWORD_ADDRESS, input.address],
      [MAIL_PER_EMAIL, emailSubject(input.email)],
    ]);
    if (!turn.ok) return { ok: false, reason: 'throttled', retryAfterSeconds: turn.retryAfterSeconds };
    const passwordHash = await hashPassword(input.password);
    const token = newToken();
    await this.db.transaction(async (tx) => {
      if (await store.findUserByEmail(tx, input.email)) {
        return this.queueMail(tx, input.lang, input.email, { kind: 'account_exists', login: this.link('/dashboard/login'), forgot: this.link('/dashboard/password/forgot') });
      }
      await store.insertSignup(tx, { tokenHash: sha256(token), email: input.email, passwordHash, businessName: input.businessName, ttlSeconds: SIGNUP_TTL_SECONDS });
      await this.queueMail(tx, input.lang, input.email, { kind: 'confirm_signup', link: this.link(`/dashboard/signup/confirm/${token}`), business: input.businessName });
    });
    this.mail.sendNow();
    return { ok: true };
  }

  /** The sign-up a link finishes, while it can. */
  signupOf(token: string) {
    return store.findOpenSignup(this.db, sha256(token));
  }

  /** Finishes a sign-up, once: an account, its owner and its first product, test mode only; then a session. */
  async confirmSignUp(token: string): Promise<{ ok: true; token: string } | { ok: false; reason: 'not_found' | 'email_taken' }> {
    const created = await this.db.transaction(async (tx) => {
      const signup = await store.takeSignup(tx, sha256(token));
      if (!signup) return 'not_found' as const;
      const user = await store.insertUser(tx, { id: newId('usr'), email: signup.email, passwordHash: signup.password_hash });
      if (!user) return 'email_taken' as const;
      const accountId = newId('acct');
      await store.insertAccount(tx, { id: accountId, name: signup.business_name });
      await store.insertMembership(tx, { accountId, userId: user.id, role: 'owner' });
      const product = await this.products.createForAccount(tx, accountId, signup.business_name);
      await store.insertAudit(tx, { accountId, userId: user.id, action: 'account.created', target: product.id, livemode: null });
      return { userId: user.id, accountId };
    });
    if (typeof created === 'string') return { ok: false, reason: created };
    return { ok: true, token: await this.startSession(created.userId, created.accountId, 'password') };
  }

  /**
   * Mails a link that sets a new password, if a login has the e-mail; the answer is the same either way. Throttled per
   * address and per e-mail, so that no one is flooded with mail.
   */
  async requestPasswordReset(input: { email: string; address: string; lang: MailLang }): Promise<{ ok: true } | Throttled> {
    const turn = await this.throttles.takeAll([
      [RESET_ADDRESS, input.address],
      [MAIL_PER_EMAIL, emailSubject(input.email)],
    ]);
    if (!turn.ok) return { ok: false, reason: 'throttled', retryAfterSeconds: turn.retryAfterSeconds };
    const token = newToken();
    const queued = await this.db.transaction(async (tx) => {
      const user = await store.findUserByEmail(tx, input.email);
      if (!user) return false;
      await store.insertPasswordReset(tx, { tokenHash: sha256(token), userId: user.id, ttlSeconds: RESET_TTL_SECONDS });
      await this.queueMail(tx, input.lang, user.email, { kind: 'reset_password', link: this.link(`/dashboard/password/reset/${token}`) });
      return true;
    });
    if (queued) this.mail.sendNow();
    return { ok: true };
  }

  /** Whether a reset link can still be used. */
  async passwordResetOpen(token: string): Promise<boolean> {
    return (await store.findOpenPasswordReset(this.db, sha256(token))) !== undefined;
  }

  /**
   * Sets the password a reset link was sent for, once: every session of the user ends and their other links die. No
   * session begins: the user logs in with the new password, and their second factor if they have one.
   */
  async resetPassword(token: string, password: string, input: { address: string; lang: MailLang }): Promise<{ ok: true } | { ok: false; reason: 'not_found' } | Throttled> {
    if (!(await this.passwordResetOpen(token))) return { ok: false, reason: 'not_found' };
    const turn = await this.throttles.takeAll([[NEW_PASSWORD_ADDRESS, input.address]]);
    if (!turn.ok) return { ok: false, reason: 'throttled', retryAfterSeconds: turn.retryAfterSeconds };
    const passwordHash = await hashPassword(password);
    const user = await this.db.transaction(async (tx) => {
      const reset = await store.takePasswordReset(tx, sha256(token));
      if (!reset) return undefined;
      await this.replacePassword(tx, { userId: reset.user_id, email: reset.email, passwordHash, lang: input.lang, keepSession: null });
      return reset;
    });
    if (!user) return { ok: false, reason: 'not_found' };
    await this.throttles.clear(PASSWORD_ACCOUNT, emailSubject(user.email));
    this.mail.sendNow();
    return { ok: true };
  }

  /** Changes the signed-in user's password after their current one; their other sessions end. */
  async changePassword(session: { token: string; actor: Actor }, current: string, next: string, input: { address: string; lang: MailLang }): Promise<PasswordCheck> {
    const checked = await this.confirmPassword(session.actor.userId, current, input.address);
    if (!checked.ok) return checked;
    const turn = await this.throttles.takeAll([[NEW_PASSWORD_ADDRESS, input.address]]);
    if (!turn.ok) return { ok: false, reason: 'throttled', retryAfterSeconds: turn.retryAfterSeconds };
    const passwordHash = await hashPassword(next);
    await this.db.transaction(async (tx) => {
      const user = await store.findUser(tx, session.actor.userId);
      await this.replacePassword(tx, { userId: session.actor.userId, email: user!.email, passwordHash, lang: input.lang, keepSession: sha256(session.token) });
    });
    this.mail.sendNow();
    return { ok: true };
  }

  /** A new password: sessions but `keepSession` end, open reset links die, every account's log and the user are told. */
  private async replacePassword(tx: Transaction, change: { userId: string; email: string; passwordHash: string; lang: MailLang; keepSession: Buffer | null }): Promise<void> {
    await store.setPassword(tx, change.userId, change.passwordHash);
    await store.revokeSessionsOf(tx, change.userId, change.keepSession);
    await store.closePasswordResets(tx, change.userId);
    await store.insertAuditForUser(tx, { userId: change.userId, action: 'user.password_changed', livemode: null });
    await this.queueMail(tx, change.lang, change.email, { kind: 'password_changed', email: change.email, forgot: this.link('/dashboard/password/forgot') });
  }

  private queueMail(tx: Transaction, lang: MailLang, to: string, mail: AccountMail): Promise<void> {
    return this.mail.queue(tx, { to, ...composeMail(lang, mail) });
  }

  private link(path: string): string {
    return `${this.publicUrl}${path}`;
  }

  /**
   * Checks a password once the client's address and the e-mail have given it a turn. An unknown e-mail is throttled,
   * takes as long and says the same as a known one with a wrong password.
   */
  async logIn(input: { email: string; password: string; address: string }): Promise<LogIn> {
    const checked = await this.checkPassword(input.email, input.password, input.address);
    if (!checked.ok) return checked.result;
    const { user } = checked;
    const accountId = await store.firstAccountOf(this.db, user.id);
    if (accountId === undefined) return { ok: false, reason: 'wrong_password' };
    // With a second factor, the password opens only the page that asks for it, for a few minutes.
    if (user.totp_sealed !== null) return { ok: true, token: await this.startSession(user.id, accountId, 'awaiting_second_factor'), secondFactor: true };
    await store.insertAudit(this.db, { accountId, userId: user.id, action: 'user.logged_in', target: null, livemode: null });
    return { ok: true, token: await this.startSession(user.id, accountId, 'password'), secondFactor: false };
  }

  /**
   * The one place a password is checked, after turns of the address and the e-mail; a right one gives the address its
   * turn back and clears the e-mail's failures, a wrong one leaves them counted.
   */
  private async checkPassword(email: string, password: string, address: string): Promise<{ ok: true; user: store.UserRow } | { ok: false; result: Exclude<PasswordCheck, { ok: true }> }> {
    const turn = await this.throttles.takeAll([
      [PASSWORD_ADDRESS, address],
      [PASSWORD_ACCOUNT, emailSubject(email)],
    ]);
    if (!turn.ok) return { ok: false, result: { ok: false, reason: 'throttled', retryAfterSeconds: turn.retryAfterSeconds } };
    const user = await store.findUserByEmail(this.db, email);
    const valid = await verifyPassword(password, user?.password_hash ?? UNKNOWN_USER_HASH);
    if (!user || !valid) return { ok: false, result: { ok: false, reason: 'wrong_password' } };
    await this.throttles.giveBack(PASSWORD_ADDRESS, address);
    await this.throttles.clear(PASSWORD_ACCOUNT, emailSubject(email));
    return { ok: true, user };
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
    await store.insertAudit(this.db, { accountId: pending.account_id, userId: user.id, action: 'user.logged_in', target: `second factor: ${how}`, livemode: null });
    return { ok: true, token: await this.startSession(user.id, pending.account_id, 'second_factor') };
  }

  /** A seed to set up an authenticator with; sealed for the confirming form, since nothing is stored until then. */
  async beginSecondFactor(email: string) {
    const seed = await newSeed(email);
    return { ...seed, sealed: this.sealer.seal(seed.base32) };
  }

  /**
   * Turns the second factor on once a code of the new seed proves the app has it; returns the recovery codes. A user
   * who has one already must turn it off first (a session that did not prove it cannot replace it). The session that
   * turned it on counts as having proved it.
   */
  async enableSecondFactor(session: { token: string; actor: Actor }, sealedSeed: string, code: string): Promise<{ ok: true; recoveryCodes: string[] } | { ok: false }> {
    let seed: string;
    try {
      seed = this.sealer.open(sealedSeed);
    } catch {
      return { ok: false };
    }
    const step = stepOf(seed, code.trim());
    if (step === null) return { ok: false };
    const { codes, hashes } = newRecoveryCodes();
    const enabled = await this.db.transaction(async (tx) => {
      if (!(await store.setSecondFactor(tx, session.actor.userId, { totpSealed: this.sealer.seal(seed), recoveryHashes: hashes }))) return false;
      await store.takeTotpStep(tx, session.actor.userId, step);
      await store.markSecondFactorProved(tx, sha256(session.token));
      await this.auditUser(session.actor, 'user.second_factor_enabled', tx);
      return true;
    });
    return enabled ? { ok: true, recoveryCodes: codes } : { ok: false };
  }

  /**
   * Turns the second factor off: only from a session that proved it (a session made by a password alone, an
   * invitation's included, cannot), and after the password.
   */
  async disableSecondFactor(
    session: { actor: Actor; secondFactorProved: boolean },
    password: string,
    address: string,
  ): Promise<PasswordCheck | { ok: false; reason: 'second_factor_required' }> {
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
   * Whether `password` is the user's: the dashboard asks again before it shows a secret or turns off the second
   * factor. Throttled as a log-in is, so that this is no way around its throttling.
   */
  async confirmPassword(userId: string, password: string, address: string): Promise<PasswordCheck> {
    const user = await store.findUser(this.db, userId);
    if (!user) return { ok: false, reason: 'wrong_password' };
    const checked = await this.checkPassword(user.email, password, address);
    return checked.ok ? { ok: true } : checked.result;
  }

  /** A new session: always a new token, so that a token planted before log-in never becomes a session. */
  private async startSession(userId: string, accountId: string, proof: 'awaiting_second_factor' | 'password' | 'second_factor'): Promise<string> {
    const token = newToken();
    const pending = proof === 'awaiting_second_factor';
    await store.insertSession(this.db, {
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
    await store.revokeSession(this.db, sha256(token));
    await this.audit(actor, 'user.logged_out', null);
  }

  setMode(token: string, livemode: boolean): Promise<void> {
    return store.setSessionMode(this.db, sha256(token), livemode);
  }

  /** Deletes what no longer counts (ended sessions and links, spent throttles, old mail), a bounded batch of each. */
  async deleteEnded(batchMax: number): Promise<number> {
    const counts = [
      await store.deleteEndedSessions(this.db, batchMax),
      await store.deleteEndedLinks(this.db, batchMax),
      await this.throttles.deleteExpired(batchMax),
      await this.mail.deleteOld(batchMax),
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

  /** An invitation whose link (its token) the owner hands over; shown once. */
  async invite(actor: Actor, email: string, role: Role): Promise<{ ok: true; token: string } | { ok: false; reason: 'already_member' }> {
    const existing = await store.findUserByEmail(this.db, email);
    if (existing && (await store.findMember(this.db, actor.accountId, existing.id))) return { ok: false, reason: 'already_member' };
    const token = newToken();
    await this.db.transaction(async (tx) => {
      const id = newId('inv');
      await store.insertInvitation(tx, { tokenHash: sha256(token), id, accountId: actor.accountId, email, role, invitedBy: actor.userId, ttlSeconds: INVITATION_TTL_SECONDS });
      await this.audit(actor, 'team.invited', `${email} as ${role}`, tx);
    });
    return { ok: true, token };
  }

  invitation(token: string) {
    return store.findOpenInvitation(this.db, sha256(token));
  }

  /**
   * Joins the invitation's account: a new user with `password`, or the existing user of that email if `password` is
   * theirs (checked and throttled as a log-in is). Used once; then a session in the account, which waits for the
   * second factor of a user who has one.
   */
  async acceptInvitation(token: string, password: string, address: string): Promise<Joined> {
    const invitation = await store.findOpenInvitation(this.db, sha256(token));
    if (!invitation) return { ok: false, reason: 'not_found' };
    const existing = await store.findUserByEmail(this.db, invitation.email);
    let passwordHash: string | null = null;
    if (existing) {
      const checked = await this.checkPassword(invitation.email, password, address);
      if (!checked.ok) return checked.result;
    } else {
      const turn = await this.throttles.takeAll([[NEW_PASSWORD_ADDRESS, address]]);
      if (!turn.ok) return { ok: false, reason: 'throttled', retryAfterSeconds: turn.retryAfterSeconds };
      passwordHash = await hashPassword(password);
    }
    const joined = await this.db.transaction(async (tx) => {
      const taken = await store.acceptInvitation(tx, sha256(token));
      if (!taken) return null;
      const user = existing ?? (await store.insertUser(tx, { id: newId('usr'), email: taken.email, passwordHash: passwordHash! }));
      if (!user) return null;
      await store.insertMembership(tx, { accountId: taken.account_id, userId: user.id, role: taken.role });
      await store.insertAudit(tx, { accountId: taken.account_id, userId: user.id, action: 'team.joined', target: `${taken.email} as ${taken.role}`, livemode: null });
      return { userId: user.id, accountId: taken.account_id };
    });
    if (!joined) return { ok: false, reason: 'not_found' };
    const secondFactor = existing !== undefined && existing.totp_sealed !== null;
    return { ok: true, token: await this.startSession(joined.userId, joined.accountId, secondFactor ? 'awaiting_second_factor' : 'password'), secondFactor };
  }

  async revokeInvitation(actor: Actor, id: string): Promise<TeamChange> {
    return this.db.transaction(async (tx) => {
      if (!(await store.revokeInvitation(tx, actor.accountId, id))) return { ok: false, reason: 'not_found' };
      await this.audit(actor, 'team.invitation_revoked', id, tx);
      return { ok: true };
    });
  }

  /** Changes a member's role; an account always keeps an owner. */
  async changeRole(actor: Actor, userId: string, role: Role): Promise<TeamChange> {
    return this.ownersKept(actor, userId, role === 'owner', async (tx, member) => {
      await store.updateRole(tx, actor.accountId, userId, role);
      await this.audit(actor, 'team.role_changed', `${member.email}: ${member.role} → ${role}`, tx);
    });
  }

  /**
   * Removes a member, ends their sessions in the account and revokes the account's open invitations they sent or were
   * sent; an account always keeps an owner.
   */
  async removeMember(actor: Actor, userId: string): Promise<TeamChange> {
    return this.ownersKept(actor, userId, false, async (tx, member) => {
      await store.deleteMembership(tx, actor.accountId, userId);
      await store.revokeInvitationsOf(tx, actor.accountId, { userId, email: member.email });
      await this.audit(actor, 'team.removed', member.email, tx);
    });
  }

  /** Runs a change of a member under the account's lock, refusing one that would leave no owner. */
  private ownersKept(actor: Actor, userId: string, staysOwner: boolean, change: (tx: Transaction, member: store.MemberRow) => Promise<void>): Promise<TeamChange> {
    return this.db.transaction(async (tx) => {
      await store.lockAccount(tx, actor.accountId);
      const member = await store.findMember(tx, actor.accountId, userId);
      if (!member) return { ok: false, reason: 'not_found' } as const;
      if (member.role === 'owner' && !staysOwner && (await store.countOwners(tx, actor.accountId)) <= 1) return { ok: false, reason: 'last_owner' } as const;
      await change(tx, member);
      return { ok: true } as const;
    });
  }

  /** Records what a user did; in the transaction of the change when there is one. */
  audit(actor: Actor, action: string, target: string | null, db: Queryable = this.db): Promise<void> {
    return store.insertAudit(db, { accountId: actor.accountId, userId: actor.userId, action, target, livemode: actor.livemode });
  }

  /** Records a change of the user's own (their second factor) in every account they belong to. */
  private auditUser(actor: Actor, action: string, db: Queryable): Promise<void> {
    return store.insertAuditForUser(db, { userId: actor.userId, action, livemode: actor.livemode });
  }

  /** The account's audit log, newest first, a page of at most AUDIT_PAGE_MAX before entry `before`. */
  async auditLog(accountId: string, before = Number.MAX_SAFE_INTEGER): Promise<{ rows: store.AuditRow[]; hasMore: boolean }> {
    const rows = await store.listAudit(this.db, accountId, before, AUDIT_PAGE_MAX + 1);
    return { rows: rows.slice(0, AUDIT_PAGE_MAX), hasMore: rows.length > AUDIT_PAGE_MAX };
  }
}
