import type { Queryable, Transaction } from '../../db/types.js';

export type OperatorRole = 'admin' | 'support';
export const OPERATOR_ROLES: readonly OperatorRole[] = ['admin', 'support'];

/** An operator's session, as every console request reads it. */
export interface OperatorSessionRow {
  user_id: string;
  email: string;
  role: OperatorRole;
  csrf_token: string;
  /** Whether the login has a second factor; until it has, the session opens only the page that sets one up. */
  totp_enabled: boolean;
  /** Whether this session proved it: every page but the set-up asks for it. */
  second_factor: boolean;
  expires_at: Date;
}

/** A session still valid, of a login that is an operator: a merchant's session, which has an account, is none. */
export async function findOperatorSession(db: Queryable, tokenHash: Buffer): Promise<OperatorSessionRow | undefined> {
  const [row] = await db.query<OperatorSessionRow>(
    `SELECT s.user_id, u.email, o.role, s.csrf_token, u.totp_sealed IS NOT NULL AS totp_enabled, s.second_factor, s.expires_at
       FROM dashboard_sessions s
       JOIN users u ON u.id = s.user_id
       JOIN operators o ON o.user_id = s.user_id
      WHERE s.token_hash = $1 AND s.account_id IS NULL AND s.revoked_at IS NULL AND s.expires_at > now() AND NOT s.second_factor_pending`,
    [tokenHash],
  );
  return row;
}

export async function isOperator(db: Queryable, userId: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM operators WHERE user_id = $1', [userId])).length === 1;
}

/** Serializes the creation of operators: the first one is created once, whoever asks at the same time. */
export async function lockOperators(tx: Transaction): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('operators', 0))`);
}

export async function countOperators(db: Queryable, role: OperatorRole | null = null): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM operators WHERE $1::text IS NULL OR role = $1', [role]);
  return row!.n;
}

/** Removes the login's operator role; its login stays, for the audit log's sake, and opens nothing. */
export async function deleteOperator(tx: Transaction, userId: string): Promise<{ email: string; role: OperatorRole } | undefined> {
  const [row] = await tx.query<{ email: string; role: OperatorRole }>(
    'DELETE FROM operators o USING users u WHERE o.user_id = $1 AND u.id = o.user_id RETURNING u.email, o.role',
    [userId],
  );
  return row;
}

export async function insertOperator(tx: Transaction, operator: { userId: string; role: OperatorRole; invitedBy: string | null }): Promise<void> {
  await tx.query('INSERT INTO operators (user_id, role, invited_by) VALUES ($1, $2, $3)', [operator.userId, operator.role, operator.invitedBy]);
}

export interface OperatorRow {
  user_id: string;
  email: string;
  role: OperatorRole;
  totp_enabled: boolean;
  created_at: Date;
}

export const OPERATORS_LISTED_MAX = 200;

/** The operators, oldest first, at most `limit`. */
export async function listOperators(db: Queryable, limit: number): Promise<OperatorRow[]> {
  return db.query<OperatorRow>(
    `SELECT o.user_id, u.email, o.role, u.totp_sealed IS NOT NULL AS totp_enabled, o.created_at
       FROM operators o JOIN users u ON u.id = o.user_id ORDER BY o.created_at, o.user_id LIMIT $1`,
    [limit],
  );
}

export interface OperatorInvitationRow {
  id: string;
  email: string;
  role: OperatorRole;
  invited_by: string;
  created_at: Date;
  expires_at: Date;
}

const INVITATION_COLUMNS = 'id, email, role, invited_by, created_at, expires_at';

export async function insertInvitation(
  tx: Transaction,
  invitation: { tokenHash: Buffer; id: string; email: string; role: OperatorRole; invitedBy: string; ttlSeconds: number },
): Promise<void> {
  await tx.query(
    `INSERT INTO operator_invitations (token_hash, id, email, role, invited_by, expires_at) VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 second')`,
    [invitation.tokenHash, invitation.id, invitation.email, invitation.role, invitation.invitedBy, invitation.ttlSeconds],
  );
}

const OPEN = 'accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()';

export async function findOpenInvitation(db: Queryable, tokenHash: Buffer): Promise<OperatorInvitationRow | undefined> {
  const [row] = await db.query<OperatorInvitationRow>(`SELECT ${INVITATION_COLUMNS} FROM operator_invitations WHERE token_hash = $1 AND ${OPEN}`, [tokenHash]);
  return row;
}

/** Takes an open invitation, once: of two acceptances at once, one gets it. */
export async function acceptInvitation(tx: Transaction, tokenHash: Buffer): Promise<OperatorInvitationRow | undefined> {
  const [row] = await tx.query<OperatorInvitationRow>(
    `UPDATE operator_invitations SET accepted_at = now() WHERE token_hash = $1 AND ${OPEN} RETURNING ${INVITATION_COLUMNS}`,
    [tokenHash],
  );
  return row;
}

export const INVITATIONS_LISTED_MAX = 50;

export async function listOpenInvitations(db: Queryable): Promise<OperatorInvitationRow[]> {
  return db.query<OperatorInvitationRow>(`SELECT ${INVITATION_COLUMNS} FROM operator_invitations WHERE ${OPEN} ORDER BY created_at DESC LIMIT $1`, [INVITATIONS_LISTED_MAX]);
}

export async function revokeInvitation(tx: Transaction, id: string): Promise<boolean> {
  const rows = await tx.query(`UPDATE operator_invitations SET revoked_at = now() WHERE id = $1 AND ${OPEN} RETURNING id`, [id]);
  return rows.length === 1;
}

/** Revokes the open invitations `userId` sent, or that were sent to `email`: a removed operator's leave nothing open. */
export function revokeInvitationsOf(tx: Transaction, userId: string, email: string): void {
  tx.write(`UPDATE operator_invitations SET revoked_at = now() WHERE (invited_by = $1 OR email = $2) AND ${OPEN}`, [userId, email]);
}

/** Who acted: an operator in the console, or the operator token through the API (operatorId null). */
export interface OperatorActor {
  operatorId: string | null;
  via: 'console' | 'api';
}

export interface AuditRow {
  seq: string;
  operator_id: string | null;
  operator_email: string | null;
  via: 'console' | 'api';
  action: string;
  target: string | null;
  detail: string | null;
  created_at: Date;
}

export async function insertAudit(db: Queryable, actor: OperatorActor, entry: { action: string; target: string | null; detail?: string | null }): Promise<void> {
  await db.query('INSERT INTO operator_audit (operator_id, via, action, target, detail) VALUES ($1, $2, $3, $4, $5)', [
    actor.operatorId,
    actor.via,
    entry.action,
    entry.target?.slice(0, 254) ?? null,
    entry.detail?.slice(0, 1000) ?? null,
  ]);
}

/** A page of the audit log, newest first, before entry `before`, optionally of one target. */
export async function listAudit(db: Queryable, query: { before: bigint; target: string | null; limit: number }): Promise<AuditRow[]> {
  return db.query<AuditRow>(
    `SELECT a.seq::text AS seq, a.operator_id, u.email AS operator_email, a.via, a.action, a.target, a.detail, a.created_at
       FROM operator_audit a LEFT JOIN users u ON u.id = a.operator_id
      WHERE a.seq < $1 AND ($2::text IS NULL OR a.target = $2)
      ORDER BY a.seq DESC LIMIT $3`,
    [query.before.toString(), query.target, query.limit],
  );
}
