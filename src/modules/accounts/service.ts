// Merchant accounts for the dashboard: sign-up, log-in with throttling, sessions kept in the database (revocable and
// shared by every process), the team and its roles, invitations by one-time link, and the audit log.
import { randomBytes } from 'node:crypto';
import type { Db, Queryable, Transaction } from '../../db/types.js';
import { newId } from '../../core/ids.js';
import { RateLimiter } from '../../core/rate-limit.js';
import { sha256 } from '../../lib/secrets.js';
import type { ProductsService } from '../products/service.js';
import type { Sealer } from '../../lib/sealing.js';
import { hashPassword, UNKNOWN_USER_HASH, verifyPassword } from './passwords.js';
import { looksLikeRecoveryCode, newRecoveryCodes, newSeed, recoveryHash, stepOf } from './second-factor.js';
import * as store from './store.js';
import type { Role, SessionRow } from './store.js';

export const SESSION_TTL_SECONDS = 12 * 3600;
/** How long a right password waits for its second factor. */
const SECOND_FACTOR_TTL_SECONDS = 5 * 60;
const INVITATION_TTL_SECONDS = 7 * 86_400;
/** Failed log-ins an account takes in a window before it refuses log-ins until the window ends. */
export const LOGIN_FAILURES_PER_ACCOUNT = 10;
export const LOGIN_WINDOW_SECONDS = 15 * 60;
/** Failed log-ins a minute from one client address (per process). */
export const LOGIN_FAILURES_PER_ADDRESS = 20;
const AUDIT_PAGE_MAX = 100;

const newToken = () => randomBytes(32).toString('base64url');

export type LogIn =
  | { ok: true; token: string; secondFactor: boolean }
  | { ok: false; reason: 'wrong_password' | 'account_throttled' | 'address_throttled'; retryAfterSeconds?: number };

export type SecondFactor =
  | { ok: true; token: string }
  | { ok: false; reason: 'wrong_code' | 'expired' | 'account_throttled'; retryAfterSeconds?: number };

export type TeamChange = { ok: true } | { ok: false; reason: 'last_owner' | 'not_found' | 'already_member' };

/** Who acts in the dashboard, for the audit log. */
export interface Actor {
  userId: string;
  accountId: string;
  livemode: boolean;
}

export class AccountsService {
  private readonly failuresPerAddress = new RateLimiter(LOGIN_FAILURES_PER_ADDRESS, 60_000);

  constructor(
    private readonly db: Db,
    private readonly products: ProductsService,
    private readonly sealer: Sealer,
  ) {}

  /** An account, its owner and its first product, test mode only; then a session for the owner. */
  async signUp(input: { email: string; password: string; businessName: string }): Promise<{ ok: true; token: string } | { ok: false; reason: 'email_taken' }> {
    const passwordHash = await hashPassword(input.password);
    const created = await this.db.transaction(async (tx) => {
      const user = await store.insertUser(tx, { id: newId('usr'), email: input.email, passwordHash });
      if (!user) return null;
      const accountId = newId('acct');
      await store.insertAccount(tx, { id: accountId, name: input.businessName });
      await store.insertMembership(tx, { accountId, userId: user.id, role: 'owner' });
      const product = await this.products.createForAccount(tx, accountId, input.businessName);
      await store.insertAudit(tx, { accountId, userId: user.id, action: 'account.created', target: product.id, livemode: null });
      return { userId: user.id, accountId };
    });
    if (created === null) return { ok: false, reason: 'email_taken' };
    return { ok: true, token: await this.startSession(created.userId, created.accountId) };
  }

  /**
   * Checks a password, throttled per client address (in this process) and per account (in the database, for every
   * process). An unknown email takes as long as a wrong password and says the same.
   */
  async logIn(input: { email: string; password: string; address: string }): Promise<LogIn> {
    const addressWait = this.failuresPerAddress.waitSeconds(input.address);
    if (addressWait !== null) return { ok: false, reason: 'address_throttled', retryAfterSeconds: addressWait };
    const user = await store.findUserByEmail(this.db, input.email);
    const waitSeconds = user ? accountThrottled(user) : null;
    if (waitSeconds !== null) return { ok: false, reason: 'account_throttled', retryAfterSeconds: waitSeconds };
    const valid = await verifyPassword(input.password, user?.password_hash ?? UNKNOWN_USER_HASH);
    const accountId = user && valid ? await store.firstAccountOf(this.db, user.id) : undefined;
    if (!user || !valid || accountId === undefined) {
      this.failuresPerAddress.count(input.address);
      if (user) await store.countLoginFailure(this.db, user.id, LOGIN_WINDOW_SECONDS);
      return { ok: false, reason: 'wrong_password' };
    }
    await store.clearLoginFailures(this.db, user.id);
    // With a second factor, the password opens only the page that asks for it, for a few minutes.
    if (user.totp_sealed !== null) return { ok: true, token: await this.startSession(user.id, accountId, true), secondFactor: true };
    await store.insertAudit(this.db, { accountId, userId: user.id, action: 'user.logged_in', target: null, livemode: null });
    return { ok: true, token: await this.startSession(user.id, accountId), secondFactor: false };
  }

  /** The session of a right password that waits for its second factor. */
  pendingSession(token: string) {
    return store.findPendingSession(this.db, sha256(token));
  }

  /**
   * Completes a log-in with a code of the authenticator (each time step once) or a recovery code (each once), throttled
   * with the password's failures; the waiting session ends and a new one begins.
   */
  async completeSecondFactor(token: string, code: string): Promise<SecondFactor> {
    const pending = await store.findPendingSession(this.db, sha256(token));
    const user = pending ? await store.findUser(this.db, pending.user_id) : undefined;
    if (!pending || !user || user.totp_sealed === null) return { ok: false, reason: 'expired' };
    const waitSeconds = accountThrottled(user);
    if (waitSeconds !== null) return { ok: false, reason: 'account_throttled', retryAfterSeconds: waitSeconds };
    const step = stepOf(this.sealer.open(user.totp_sealed), code.trim());
    const valid =
      step !== null ? await store.takeTotpStep(this.db, user.id, step) : looksLikeRecoveryCode(code) && (await store.takeRecoveryCode(this.db, user.id, recoveryHash(code)));
    if (!valid) {
      await store.countLoginFailure(this.db, user.id, LOGIN_WINDOW_SECONDS);
      return { ok: false, reason: 'wrong_code' };
    }
    if (!(await store.takePendingSession(this.db, sha256(token)))) return { ok: false, reason: 'expired' };
    await store.clearLoginFailures(this.db, user.id);
    const how = step !== null ? 'authenticator' : 'recovery code';
    await store.insertAudit(this.db, { accountId: pending.account_id, userId: user.id, action: 'user.logged_in', target: `second factor: ${how}`, livemode: null });
    return { ok: true, token: await this.startSession(user.id, pending.account_id) };
  }

  /** A seed to set up an authenticator with; sealed for the confirming form, since nothing is stored until then. */
  async beginSecondFactor(email: string) {
    const seed = await newSeed(email);
    return { ...seed, sealed: this.sealer.seal(seed.base32) };
  }

  /** Turns the second factor on once a code of the new seed proves the app has it; returns the recovery codes. */
  async enableSecondFactor(actor: Actor, sealedSeed: string, code: string): Promise<{ ok: true; recoveryCodes: string[] } | { ok: false }> {
    let seed: string;
    try {
      seed = this.sealer.open(sealedSeed);
    } catch {
      return { ok: false };
    }
    const step = stepOf(seed, code.trim());
    if (step === null) return { ok: false };
    const { codes, hashes } = newRecoveryCodes();
    await this.db.transaction(async (tx) => {
      await store.setSecondFactor(tx, actor.userId, { totpSealed: this.sealer.seal(seed), recoveryHashes: hashes });
      await store.takeTotpStep(tx, actor.userId, step);
      await this.audit(actor, 'user.second_factor_enabled', null, tx);
    });
    return { ok: true, recoveryCodes: codes };
  }

  /** Turns the second factor off, after the password. */
  async disableSecondFactor(actor: Actor, password: string): Promise<boolean> {
    if (!(await this.confirmPassword(actor.userId, password))) return false;
    await this.db.transaction(async (tx) => {
      await store.setSecondFactor(tx, actor.userId, null);
      await this.audit(actor, 'user.second_factor_disabled', null, tx);
    });
    return true;
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
   * Whether `password` is the user's: the dashboard asks again before it shows a secret. Failures count against the
   * account's log-in window, so that this is no way around its throttling.
   */
  async confirmPassword(userId: string, password: string): Promise<boolean> {
    const user = await store.findUser(this.db, userId);
    if (!user || accountThrottled(user) !== null) return false;
    if (await verifyPassword(password, user.password_hash)) return true;
    await store.countLoginFailure(this.db, user.id, LOGIN_WINDOW_SECONDS);
    return false;
  }

  /** A new session: always a new token, so that a token planted before log-in never becomes a session. */
  private async startSession(userId: string, accountId: string, secondFactorPending = false): Promise<string> {
    const token = newToken();
    await store.insertSession(this.db, {
      tokenHash: sha256(token),
      userId,
      accountId,
      csrfToken: newToken(),
      ttlSeconds: secondFactorPending ? SECOND_FACTOR_TTL_SECONDS : SESSION_TTL_SECONDS,
      secondFactorPending,
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

  deleteEndedSessions(batchMax: number): Promise<number> {
    return store.deleteEndedSessions(this.db, batchMax);
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
   * theirs. Used once; then a session in the account.
   */
  async acceptInvitation(token: string, password: string): Promise<{ ok: true; token: string } | { ok: false; reason: 'wrong_password' | 'not_found' }> {
    const invitation = await store.findOpenInvitation(this.db, sha256(token));
    if (!invitation) return { ok: false, reason: 'not_found' };
    const existing = await store.findUserByEmail(this.db, invitation.email);
    if (existing && !(await verifyPassword(password, existing.password_hash))) return { ok: false, reason: 'wrong_password' };
    const passwordHash = existing ? null : await hashPassword(password);
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
    return { ok: true, token: await this.startSession(joined.userId, joined.accountId) };
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

  /** Removes a member and ends their sessions in the account; an account always keeps an owner. */
  async removeMember(actor: Actor, userId: string): Promise<TeamChange> {
    return this.ownersKept(actor, userId, false, async (tx, member) => {
      await store.deleteMembership(tx, actor.accountId, userId);
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

  /** The account's audit log, newest first, a page of at most AUDIT_PAGE_MAX before entry `before`. */
  async auditLog(accountId: string, before = Number.MAX_SAFE_INTEGER): Promise<{ rows: store.AuditRow[]; hasMore: boolean }> {
    const rows = await store.listAudit(this.db, accountId, before, AUDIT_PAGE_MAX + 1);
    return { rows: rows.slice(0, AUDIT_PAGE_MAX), hasMore: rows.length > AUDIT_PAGE_MAX };
  }
}

/** Seconds until the account takes log-ins again, when its failures filled the window; null when it takes them. */
function accountThrottled(user: store.UserRow): number | null {
  if (user.login_failures < LOGIN_FAILURES_PER_ACCOUNT || user.login_window_start === null) return null;
  const endsMs = user.login_window_start.getTime() + LOGIN_WINDOW_SECONDS * 1000;
  return endsMs <= Date.now() ? null : Math.ceil((endsMs - Date.now()) / 1000);
}
