// The ways into an account that go through its mailbox: sign-up, finished from the link mailed to the address, and a
// forgotten password, set anew from a link; and the password changed from a session.
import type { Db, Transaction } from '../../db/types.js';
import { newId } from '../../core/ids.js';
import { sha256 } from '../../lib/secrets.js';
import type { ProductsService } from '../products/service.js';
import type { Throttles } from '../throttles/service.js';
import type { AccountMailer } from './mailer.js';
import type { MailLang } from './mail-texts.js';
import { hashPassword } from './passwords.js';
import { emailSubject, MAIL_PER_EMAIL, MAIL_REQUEST_ADDRESS, PASSWORD_ACCOUNT } from './policies.js';
import { newToken, type AccountsService, type PasswordCheck, type SignedSession, type Throttled } from './service.js';
import * as store from './store.js';

const SIGNUP_TTL_SECONDS = 86_400;
const RESET_TTL_SECONDS = 30 * 60;

export class AccountLinks {
  constructor(
    private readonly db: Db,
    private readonly accounts: AccountsService,
    private readonly products: ProductsService,
    private readonly throttles: Throttles,
    private readonly mailer: AccountMailer,
  ) {}

  /**
   * Starts a sign-up: the address gets a link that finishes it, or, when it has a login already, a mail that says so.
   * The answer is the same either way, so that sign-up tells no one who has a login; the password is chosen only by
   * whoever opens the link, so that a sign-up made for someone else's address is theirs, not its maker's.
   */
  async signUp(input: { email: string; businessName: string; address: string; lang: MailLang }): Promise<{ ok: true } | Throttled> {
    const mailed = await this.mailTurn(input.email, input.address);
    if (!mailed.ok) return mailed;
    if (!mailed.send) return { ok: true };
    const token = newToken();
    await this.db.transaction(async (tx) => {
      if (await store.findUserByEmail(tx, input.email)) {
        this.mailer.queue(tx, input.lang, input.email, { kind: 'account_exists', login: this.mailer.link('/dashboard/login'), forgot: this.mailer.link('/dashboard/password/forgot') });
        return;
      }
      await store.insertSignup(tx, { tokenHash: sha256(token), email: input.email, businessName: input.businessName, ttlSeconds: SIGNUP_TTL_SECONDS });
      this.mailer.queue(tx, input.lang, input.email, { kind: 'confirm_signup', link: this.mailer.link(`/dashboard/signup/confirm/${token}`), business: input.businessName });
    });
    this.mailer.sendNow();
    return { ok: true };
  }

  /** The sign-up a link finishes, while it can. */
  signupOf(token: string) {
    return store.findOpenSignup(this.db, sha256(token));
  }

  /**
   * Finishes a sign-up, once, with the password chosen now: an account, its owner, its first product (test mode only)
   * and that product's first test key, whose secret the answer carries to be shown this once.
   */
  async confirmSignUp(token: string, password: string, address: string): Promise<{ ok: true; token: string; testKey: string } | { ok: false; reason: 'not_found' | 'email_taken' } | Throttled> {
    if (!(await this.signupOf(token))) return { ok: false, reason: 'not_found' };
    const turn = await this.accounts.newPasswordTurn(address);
    if (!turn.ok) return turn;
    const passwordHash = await hashPassword(password);
    const created = await this.db.transaction(async (tx) => {
      const signup = await store.takeSignup(tx, sha256(token));
      if (!signup) return 'not_found' as const;
      const user = await store.insertUser(tx, { id: newId('usr'), email: signup.email, passwordHash });
      if (!user) return 'email_taken' as const;
      const accountId = newId('acct');
      await store.insertAccount(tx, { id: accountId, name: signup.business_name });
      await store.insertMembership(tx, { accountId, userId: user.id, role: 'owner' });
      const { product, testKey } = await this.products.createForAccount(tx, accountId, signup.business_name);
      await store.insertAudit(tx, { accountId, userId: user.id, action: 'account.created', target: product.id, livemode: null });
      await store.insertAudit(tx, { accountId, userId: user.id, action: 'api_key.created', target: testKey.row.id, livemode: false });
      return { token: await this.accounts.openSession(user.id, accountId, 'password', tx), testKey: testKey.secret };
    });
    return typeof created === 'string' ? { ok: false, reason: created } : { ok: true, ...created };
  }

  /**
   * Mails a link that sets a new password, if a login of a merchant account has the e-mail (an operator's login is no
   * dashboard's to reset); the answer is the same either way.
   */
  async requestPasswordReset(input: { email: string; address: string; lang: MailLang }): Promise<{ ok: true } | Throttled> {
    const mailed = await this.mailTurn(input.email, input.address);
    if (!mailed.ok) return mailed;
    if (!mailed.send) return { ok: true };
    const token = newToken();
    const queued = await this.db.transaction(async (tx) => {
      const user = await store.findUserByEmail(tx, input.email);
      if (!user || (await store.firstAccountOf(tx, user.id)) === undefined) return false;
      await store.insertPasswordReset(tx, { tokenHash: sha256(token), userId: user.id, ttlSeconds: RESET_TTL_SECONDS });
      this.mailer.queue(tx, input.lang, user.email, { kind: 'reset_password', link: this.mailer.link(`/dashboard/password/reset/${token}`) });
      return true;
    });
    if (queued) this.mailer.sendNow();
    return { ok: true };
  }

  /**
   * A turn to mail `email` at the request of `address`: refused past the address's share; past the e-mail's share the
   * request is answered as usual and sends nothing (its owner has the links already sent).
   */
  private async mailTurn(email: string, address: string): Promise<{ ok: true; send: boolean } | Throttled> {
    const asked = await this.throttles.takeAll([[MAIL_REQUEST_ADDRESS, address]]);
    if (!asked.ok) return { ok: false, reason: 'throttled', retryAfterSeconds: asked.retryAfterSeconds };
    return { ok: true, send: (await this.throttles.take(MAIL_PER_EMAIL, emailSubject(email))).ok };
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
    const turn = await this.accounts.newPasswordTurn(input.address);
    if (!turn.ok) return turn;
    const passwordHash = await hashPassword(password);
    const user = await this.db.transaction(async (tx) => {
      const reset = await store.takePasswordReset(tx, sha256(token));
      if (reset) await this.replacePassword(tx, { userId: reset.user_id, email: reset.email, passwordHash, lang: input.lang, keepSession: null });
      return reset;
    });
    if (!user) return { ok: false, reason: 'not_found' };
    await this.throttles.clear(PASSWORD_ACCOUNT, emailSubject(user.email));
    this.mailer.sendNow();
    return { ok: true };
  }

  /**
   * Changes the signed-in user's password after their current one, from a session that proved their second factor if
   * they have one; their other sessions end.
   */
  async changePassword(session: SignedSession, current: string, next: string, input: { address: string; lang: MailLang }): Promise<PasswordCheck | { ok: false; reason: 'second_factor_required' }> {
    const user = await store.findUser(this.db, session.actor.userId);
    if (!user) return { ok: false, reason: 'wrong_password' };
    if (user.totp_sealed !== null && !session.secondFactorProved) return { ok: false, reason: 'second_factor_required' };
    const checked = await this.accounts.confirmPassword(user.id, current, input.address);
    if (!checked.ok) return checked;
    const turn = await this.accounts.newPasswordTurn(input.address);
    if (!turn.ok) return turn;
    const passwordHash = await hashPassword(next);
    await this.db.transaction((tx) => this.replacePassword(tx, { userId: user.id, email: user.email, passwordHash, lang: input.lang, keepSession: sha256(session.token) }));
    this.mailer.sendNow();
    return { ok: true };
  }

  /** A new password: sessions but `keepSession` end, open reset links die, every account's log and the user are told. */
  private async replacePassword(tx: Transaction, change: { userId: string; email: string; passwordHash: string; lang: MailLang; keepSession: Buffer | null }): Promise<void> {
    await store.setPassword(tx, change.userId, change.passwordHash);
    await store.revokeSessionsOf(tx, change.userId, change.keepSession);
    await store.closePasswordResets(tx, change.userId);
    await this.accounts.auditUser({ userId: change.userId, livemode: null }, 'user.password_changed', tx);
    this.mailer.queue(tx, change.lang, change.email, { kind: 'password_changed', email: change.email, forgot: this.mailer.link('/dashboard/password/forgot') });
  }
}
