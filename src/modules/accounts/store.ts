// Accounts, their users and roles, dashboard sessions, invitations and the audit log.
import type { Queryable, Transaction } from '../../db/types.js';

export type Role = 'owner' | 'developer' | 'viewer';
export const ROLES: readonly Role[] = ['owner', 'developer', 'viewer'];

export interface UserRow {
  id: string;
  email: string;
  password_hash: string;
  totp_sealed: string | null;
}

const USER_COLUMNS = 'id, email, password_hash, totp_sealed';

export async function accountName(db: Queryable, accountId: string): Promise<string> {
  const [row] = await db.query<{ name: string }>('SELECT name FROM accounts WHERE id = $1', [accountId]);
  return row!.name;
}

export async function insertAccount(tx: Transaction, account: { id: string; name: string }): Promise<void> {
  await tx.query('INSERT INTO accounts (id, name) VALUES ($1, $2)', [account.id, account.name]);
}

/** Inserts a user unless one has the email already; undefined then. */
export async function insertUser(tx: Transaction, user: { id: string; email: string; passwordHash: string }): Promise<UserRow | undefined> {
  const [row] = await tx.query<UserRow>(
    `INSERT INTO users (id, email, password_hash) VALUES ($1, $2, $3) ON CONFLICT (email) DO NOTHING RETURNING ${USER_COLUMNS}`,
    [user.id, user.email, user.passwordHash],
  );
  return row;
}

export async function findUserByEmail(db: Queryable, email: string): Promise<UserRow | undefined> {
  const [row] = await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE email = $1`, [email]);
  return row;
}

export async function findUser(db: Queryable, id: string): Promise<UserRow | undefined> {
  const [row] = await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id]);
  return row;
}

export async function insertMembership(tx: Transaction, membership: { accountId: string; userId: string; role: Role }): Promise<boolean> {
  const rows = await tx.query(
    'INSERT INTO memberships (account_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (account_id, user_id) DO NOTHING RETURNING user_id',
    [membership.accountId, membership.userId, membership.role],
  );
  return rows.length === 1;
}

/** The account a user signs in to: the first one they joined. */
export async function firstAccountOf(db: Queryable, userId: string): Promise<string | undefined> {
  const [row] = await db.query<{ account_id: string }>(
    'SELECT account_id FROM memberships WHERE user_id = $1 ORDER BY created_at, account_id LIMIT 1',
    [userId],
  );
  return row?.account_id;
}

/**
 * Whether the login is in no account and is no operator: a member removed from their last account, who cannot log in
 * and joins an account again by an invitation's link (operators, whose logins the console owns, never do).
 */
export async function loginIdle(db: Queryable, userId: string): Promise<boolean> {
  const [row] = await db.query<{ idle: boolean }>(
    'SELECT NOT EXISTS (SELECT 1 FROM memberships WHERE user_id = $1) AND NOT EXISTS (SELECT 1 FROM operators WHERE user_id = $1) AS idle',
    [userId],
  );
  return row!.idle;
}

export interface MemberRow {
  user_id: string;
  email: string;
  role: Role;
  created_at: Date;
}

export const MEMBERS_MAX = 100;

export async function listMembers(db: Queryable, accountId: string): Promise<MemberRow[]> {
  return db.query<MemberRow>(
    `SELECT m.user_id, u.email, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.account_id = $1 ORDER BY m.created_at, m.user_id LIMIT $2`,
    [accountId, MEMBERS_MAX],
  );
}

/** Locks the account's memberships (its row) so that changes which must leave an owner behind serialise. */
export async function lockAccount(tx: Transaction, accountId: string): Promise<void> {
  await tx.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
}

export async function countOwners(tx: Transaction, accountId: string): Promise<number> {
  const [row] = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM memberships WHERE account_id = $1 AND role = 'owner'`, [accountId]);
  return row!.n;
}

export async function findMember(db: Queryable, accountId: string, userId: string): Promise<MemberRow | undefined> {
  const [row] = await db.query<MemberRow>(
    `SELECT m.user_id, u.email, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.account_id = $1 AND m.user_id = $2`,
    [accountId, userId],
  );
  return row;
}

export async function updateRole(tx: Transaction, accountId: string, userId: string, role: Role): Promise<void> {
  await tx.query('UPDATE memberships SET role = $3 WHERE account_id = $1 AND user_id = $2', [accountId, userId, role]);
}

export async function deleteMembership(tx: Transaction, accountId: string, userId: string): Promise<void> {
  await tx.query('DELETE FROM memberships WHERE account_id = $1 AND user_id = $2', [accountId, userId]);
  await tx.query('UPDATE dashboard_sessions SET revoked_at = now() WHERE account_id = $1 AND user_id = $2 AND revoked_at IS NULL', [accountId, userId]);
}

export interface SessionRow {
  user_id: string;
  email: string;
  totp_enabled: boolean;
  account_id: string;
  account_name: string;
  role: Role;
  csrf_token: string;
  livemode: boolean;
  /** Whether this session passed the user's second factor (at log-in, or by turning it on). */
  second_factor: boolean;
  expires_at: Date;
}

export async function insertSession(
  db: Queryable,
  session: { tokenHash: Buffer; userId: string; accountId: string | null; csrfToken: string; ttlSeconds: number; secondFactorPending: boolean; secondFactor: boolean },
): Promise<void> {
  await db.query(
    `INSERT INTO dashboard_sessions (token_hash, user_id, account_id, csrf_token, expires_at, second_factor_pending, second_factor)
     VALUES ($1, $2, $3, $4, now() + $5 * interval '1 second', $6, $7)`,
    [session.tokenHash, session.userId, session.accountId, session.csrfToken, session.ttlSeconds, session.secondFactorPending, session.secondFactor],
  );
}

export async function markSecondFactorProved(db: Queryable, tokenHash: Buffer): Promise<void> {
  await db.query('UPDATE dashboard_sessions SET second_factor = true WHERE token_hash = $1', [tokenHash]);
}

export interface PendingRow {
  user_id: string;
  /** Null for an operator's session, which opens the console and no merchant account. */
  account_id: string | null;
  email: string;
  csrf_token: string;
}

/** A session waiting for its second factor, still valid. */
export async function findPendingSession(db: Queryable, tokenHash: Buffer): Promise<PendingRow | undefined> {
  const [row] = await db.query<PendingRow>(
    `SELECT s.user_id, s.account_id, u.email, s.csrf_token FROM dashboard_sessions s JOIN users u ON u.id = s.user_id
      WHERE s.token_hash = $1 AND s.second_factor_pending AND s.revoked_at IS NULL AND s.expires_at > now()`,
    [tokenHash],
  );
  return row;
}

/** Ends a session waiting for its second factor, once: of two completions at once, one gets it. */
export async function takePendingSession(db: Queryable, tokenHash: Buffer): Promise<PendingRow | undefined> {
  const [row] = await db.query<PendingRow>(
    `UPDATE dashboard_sessions s SET revoked_at = now() FROM users u
      WHERE s.token_hash = $1 AND s.second_factor_pending AND s.revoked_at IS NULL AND s.expires_at > now() AND u.id = s.user_id
      RETURNING s.user_id, s.account_id, u.email, s.csrf_token`,
    [tokenHash],
  );
  return row;
}

/** Takes a TOTP time step for the user if no later or equal one was taken: a code works once. */
export async function takeTotpStep(db: Queryable, userId: string, step: number): Promise<boolean> {
  const rows = await db.query('UPDATE users SET totp_last_step = $2 WHERE id = $1 AND (totp_last_step IS NULL OR totp_last_step < $2) RETURNING id', [userId, step]);
  return rows.length === 1;
}

/** Uses a recovery code (by its hash) once. */
export async function takeRecoveryCode(db: Queryable, userId: string, hash: string): Promise<boolean> {
  const rows = await db.query(
    'UPDATE users SET recovery_codes = array_remove(recovery_codes, $2) WHERE id = $1 AND $2 = ANY (recovery_codes) RETURNING id',
    [userId, hash],
  );
  return rows.length === 1;
}

/** Gives a user without a second factor one; false if they have one already. */
export async function setSecondFactor(db: Queryable, userId: string, factor: { totpSealed: string; recoveryHashes: string[] }): Promise<boolean> {
  const rows = await db.query('UPDATE users SET totp_sealed = $2, recovery_codes = $3, totp_last_step = NULL WHERE id = $1 AND totp_sealed IS NULL RETURNING id', [
    userId,
    factor.totpSealed,
    factor.recoveryHashes,
  ]);
  return rows.length === 1;
}

export async function clearSecondFactor(db: Queryable, userId: string): Promise<void> {
  await db.query(`UPDATE users SET totp_sealed = NULL, recovery_codes = '{}', totp_last_step = NULL WHERE id = $1`, [userId]);
}

/** Users whose TOTP seed is sealed under a key other than `currentKeyId`: a batch. */
export async function seedsToSeal(db: Queryable, currentKeyId: string, batchMax: number): Promise<Array<{ id: string; totp_sealed: string }>> {
  return db.query('SELECT id, totp_sealed FROM users WHERE totp_sealed NOT LIKE $1 ORDER BY id LIMIT $2', [`v1.${currentKeyId}.%`, batchMax]);
}

export async function storeSeed(db: Queryable, userId: string, sealed: string): Promise<void> {
  await db.query('UPDATE users SET totp_sealed = $2 WHERE id = $1', [userId, sealed]);
}

export async function recoveryCodesLeft(db: Queryable, userId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT cardinality(recovery_codes) AS n FROM users WHERE id = $1', [userId]);
  return row?.n ?? 0;
}

/** A session still valid, with its user's current role: one whose membership ended is no session. */
export async function findSession(db: Queryable, tokenHash: Buffer): Promise<SessionRow | undefined> {
  const [row] = await db.query<SessionRow>(
    `SELECT s.user_id, u.email, u.totp_sealed IS NOT NULL AS totp_enabled, s.account_id, a.name AS account_name, m.role, s.csrf_token,
            s.livemode, s.second_factor, s.expires_at
       FROM dashboard_sessions s
       JOIN users u ON u.id = s.user_id
       JOIN accounts a ON a.id = s.account_id
       JOIN memberships m ON m.account_id = s.account_id AND m.user_id = s.user_id
      WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now() AND NOT s.second_factor_pending`,
    [tokenHash],
  );
  return row;
}

export async function revokeSession(db: Queryable, tokenHash: Buffer): Promise<void> {
  await db.query('UPDATE dashboard_sessions SET revoked_at = now() WHERE token_hash = $1 AND revoked_at IS NULL', [tokenHash]);
}

export async function setSessionMode(db: Queryable, tokenHash: Buffer, livemode: boolean): Promise<void> {
  await db.query('UPDATE dashboard_sessions SET livemode = $2 WHERE token_hash = $1', [tokenHash, livemode]);
}

export interface InvitationRow {
  id: string;
  account_id: string;
  account_name: string;
  email: string;
  role: Role;
  created_at: Date;
  expires_at: Date;
}

export async function insertInvitation(
  tx: Transaction,
  invitation: { tokenHash: Buffer; id: string; accountId: string; email: string; role: Role; invitedBy: string; ttlSeconds: number },
): Promise<void> {
  await tx.query(
    `INSERT INTO invitations (token_hash, id, account_id, email, role, invited_by, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, now() + $7 * interval '1 second')`,
    [invitation.tokenHash, invitation.id, invitation.accountId, invitation.email, invitation.role, invitation.invitedBy, invitation.ttlSeconds],
  );
}

const OPEN_INVITATION = 'i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()';

export async function findOpenInvitation(db: Queryable, tokenHash: Buffer): Promise<InvitationRow | undefined> {
  const [row] = await db.query<InvitationRow>(
    `SELECT i.id, i.account_id, a.name AS account_name, i.email, i.role, i.created_at, i.expires_at
       FROM invitations i JOIN accounts a ON a.id = i.account_id WHERE i.token_hash = $1 AND ${OPEN_INVITATION}`,
    [tokenHash],
  );
  return row;
}

/** Takes an open invitation once: of two acceptances at once, one gets it. */
export async function acceptInvitation(tx: Transaction, tokenHash: Buffer): Promise<InvitationRow | undefined> {
  const [row] = await tx.query<InvitationRow>(
    `WITH taken AS (UPDATE invitations i SET accepted_at = now() WHERE token_hash = $1 AND ${OPEN_INVITATION}
                    RETURNING i.id, i.account_id, i.email, i.role, i.created_at, i.expires_at)
     SELECT t.*, a.name AS account_name FROM taken t JOIN accounts a ON a.id = t.account_id`,
    [tokenHash],
  );
  return row;
}

export const INVITATIONS_LISTED_MAX = 50;

export async function listOpenInvitations(db: Queryable, accountId: string): Promise<InvitationRow[]> {
  return db.query<InvitationRow>(
    `SELECT i.id, i.account_id, a.name AS account_name, i.email, i.role, i.created_at, i.expires_at
       FROM invitations i JOIN accounts a ON a.id = i.account_id
      WHERE i.account_id = $1 AND ${OPEN_INVITATION} ORDER BY i.created_at DESC LIMIT $2`,
    [accountId, INVITATIONS_LISTED_MAX],
  );
}

export async function revokeInvitation(tx: Transaction, accountId: string, id: string): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE invitations i SET revoked_at = now() WHERE id = $1 AND account_id = $2 AND ${OPEN_INVITATION} RETURNING id`,
    [id, accountId],
  );
  return rows.length === 1;
}

/** Revokes the account's open invitations a member sent, and those sent to `email` when given. */
export async function revokeInvitationsOf(tx: Transaction, accountId: string, member: { userId: string; email: string | null }): Promise<void> {
  await tx.query(
    `UPDATE invitations i SET revoked_at = now() WHERE account_id = $1 AND (invited_by = $2 OR email = $3) AND ${OPEN_INVITATION}`,
    [accountId, member.userId, member.email],
  );
}

export interface AuditRow {
  seq: number;
  email: string | null;
  action: string;
  target: string | null;
  livemode: boolean | null;
  created_at: Date;
}

export async function insertAudit(
  db: Queryable,
  entry: { accountId: string; userId: string | null; action: string; target: string | null; livemode: boolean | null },
): Promise<void> {
  await db.query('INSERT INTO audit_log (account_id, user_id, action, target, livemode) VALUES ($1, $2, $3, $4, $5)', [
    entry.accountId,
    entry.userId,
    entry.action,
    entry.target?.slice(0, 300) ?? null,
    entry.livemode,
  ]);
}

/** The same entry in every account the user belongs to: a change of the user's own is seen wherever they work. */
export async function insertAuditForUser(db: Queryable, entry: { userId: string; action: string; livemode: boolean | null }): Promise<void> {
  await db.query('INSERT INTO audit_log (account_id, user_id, action, livemode) SELECT account_id, user_id, $2, $3 FROM memberships WHERE user_id = $1', [
    entry.userId,
    entry.action,
    entry.livemode,
  ]);
}

export async function listAudit(db: Queryable, accountId: string, before: number, limit: number): Promise<AuditRow[]> {
  return db.query<AuditRow>(
    `SELECT l.seq, u.email, l.action, l.target, l.livemode, l.created_at
       FROM audit_log l LEFT JOIN users u ON u.id = l.user_id
      WHERE l.account_id = $1 AND l.seq < $2 ORDER BY l.seq DESC LIMIT $3`,
    [accountId, before, limit],
  );
}

// Sign-ups waiting for their link, and password resets.

export async function insertSignup(tx: Transaction, signup: { tokenHash: Buffer; email: string; businessName: string; ttlSeconds: number }): Promise<void> {
  await tx.query(`INSERT INTO signups (token_hash, email, business_name, expires_at) VALUES ($1, $2, $3, now() + $4 * interval '1 second')`, [
    signup.tokenHash,
    signup.email,
    signup.businessName,
    signup.ttlSeconds,
  ]);
}

export interface SignupRow {
  email: string;
  business_name: string;
}

const OPEN_LINK = 'used_at IS NULL AND expires_at > now()';

export async function findOpenSignup(db: Queryable, tokenHash: Buffer): Promise<SignupRow | undefined> {
  const [row] = await db.query<SignupRow>(`SELECT email, business_name FROM signups WHERE token_hash = $1 AND ${OPEN_LINK}`, [tokenHash]);
  return row;
}

/** Uses a sign-up's link once: of two at once, one gets it. */
export async function takeSignup(tx: Transaction, tokenHash: Buffer): Promise<SignupRow | undefined> {
  const [row] = await tx.query<SignupRow>(
    `UPDATE signups SET used_at = now() WHERE token_hash = $1 AND ${OPEN_LINK} RETURNING email, business_name`,
    [tokenHash],
  );
  return row;
}

export async function insertPasswordReset(tx: Transaction, reset: { tokenHash: Buffer; userId: string; ttlSeconds: number }): Promise<void> {
  await tx.query(`INSERT INTO password_resets (token_hash, user_id, expires_at) VALUES ($1, $2, now() + $3 * interval '1 second')`, [
    reset.tokenHash,
    reset.userId,
    reset.ttlSeconds,
  ]);
}

export async function findOpenPasswordReset(db: Queryable, tokenHash: Buffer): Promise<{ user_id: string } | undefined> {
  const [row] = await db.query<{ user_id: string }>(`SELECT user_id FROM password_resets WHERE token_hash = $1 AND ${OPEN_LINK}`, [tokenHash]);
  return row;
}

/** Uses a reset link once: of two at once, one gets it. */
export async function takePasswordReset(tx: Transaction, tokenHash: Buffer): Promise<{ user_id: string; email: string } | undefined> {
  const [row] = await tx.query<{ user_id: string; email: string }>(
    `UPDATE password_resets r SET used_at = now() FROM users u
      WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.expires_at > now() AND u.id = r.user_id
      RETURNING r.user_id, u.email`,
    [tokenHash],
  );
  return row;
}

/** Ends the user's open reset links (a new password was set). */
export async function closePasswordResets(tx: Transaction, userId: string): Promise<void> {
  await tx.query('UPDATE password_resets SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [userId]);
}

export async function setPassword(tx: Transaction, userId: string, passwordHash: string): Promise<void> {
  await tx.query('UPDATE users SET password_hash = $2 WHERE id = $1', [userId, passwordHash]);
}

/** Ends every session of the user, waiting ones included, but `keep` (the session that made the change). */
export async function revokeSessionsOf(tx: Transaction, userId: string, keep: Buffer | null): Promise<void> {
  await tx.query('UPDATE dashboard_sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL AND token_hash IS DISTINCT FROM $2', [userId, keep]);
}

/** Removes sessions, sign-ups and reset links that ended a day ago or more, a bounded batch of each. */
export async function deleteEnded(db: Queryable, batchMax: number): Promise<number> {
  let deleted = 0;
  for (const table of ['dashboard_sessions', 'signups', 'password_resets']) {
    const rows = await db.query(
      `DELETE FROM ${table} WHERE token_hash IN (
         SELECT token_hash FROM ${table} WHERE expires_at < now() - interval '1 day' LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING 1`,
      [batchMax],
    );
    deleted += rows.length;
  }
  return deleted;
}
