// The simulated fiscal module: a virtual cash register that registers receipts for the tax authority, speaking the
// fiscal part of docs/rail-protocol.md. Each receipt id is registered (or refused) at most once, in one transaction
// that also checks its fence and its deadline, so that a call arriving late or after a fence registers nothing.
import { randomInt } from 'node:crypto';
import type { Db } from '../src/db/types.js';
import type { GatewayAnswer } from '../src/rails/protocol.js';
import { REFUSED_TEST_CODE } from '../src/rails/test-fiscal.js';

/** The register's id, as the tax authority issues them; never `TEST…`, which marks Tolov's own test module. */
export const SIM_TERMINAL_ID = 'UZ191211501001';
export const RECEIPTS_LIMIT_MAX = 10_000;
const ID_MAX_CHARS = 64;
const AMOUNT_MAX = 1_000_000_000_000;
/** A receipt's items and its shipping line. */
const LINES_MAX = 101;
const SIGN_DIGITS = 12;

type Body = Record<string, unknown>;
interface ReceiptRow {
  receipt_id: string;
  type: string;
  amount: number;
  status: 'REGISTERED' | 'REFUSED';
  failure_code: string | null;
  terminal_id: string | null;
  receipt_number: string | null;
  fiscal_sign: string | null;
  created_at: Date;
}
interface Registration {
  id: string;
  type: 'sale' | 'return';
  amount: number;
  lines: Array<{ code?: unknown }>;
  deadlineMs: number;
}

const ROW_COLUMNS = 'receipt_id, type, amount, status, failure_code, terminal_id, receipt_number::text AS receipt_number, fiscal_sign, created_at';

const isId = (value: unknown): value is string => typeof value === 'string' && value.length >= 1 && value.length <= ID_MAX_CHARS;

/** A registration as the protocol describes it, and as its ground-truth list shows it. */
const registered = (row: ReceiptRow) => ({
  id: row.receipt_id,
  type: row.type,
  amount: row.amount,
  terminalId: row.terminal_id!,
  receiptNumber: row.receipt_number!,
  fiscalSign: row.fiscal_sign!,
  registeredAt: row.created_at.toISOString(),
});

const answerOf = (row: ReceiptRow): GatewayAnswer => {
  if (row.status === 'REFUSED') return { result: 'refused', code: row.failure_code! };
  const { terminalId, receiptNumber, fiscalSign, registeredAt } = registered(row);
  return { result: 'ok', status: 'REGISTERED', terminalId, receiptNumber, fiscalSign, registeredAt };
};

/** The fields a registration needs, or null when one is missing or malformed. */
function registrationOf(body: Body): Registration | null {
  const { id, type, amount, lines, deadline } = body;
  const deadlineMs = typeof deadline === 'string' ? Date.parse(deadline) : NaN;
  if (!isId(id) || (type !== 'sale' && type !== 'return') || Number.isNaN(deadlineMs)) return null;
  if (!Number.isSafeInteger(amount) || (amount as number) < 1 || (amount as number) > AMOUNT_MAX) return null;
  if (!Array.isArray(lines) || lines.length < 1 || lines.length > LINES_MAX || !lines.every((line) => line !== null && typeof line === 'object')) return null;
  return { id, type, amount: amount as number, lines: lines as Registration['lines'], deadlineMs };
}

export class FiscalRegister {
  constructor(private readonly db: Db) {}

  /** Registers a receipt once per id: never once fenced or past its deadline; refused when a line has the refusing code. */
  async register(body: Body): Promise<GatewayAnswer> {
    const receipt = registrationOf(body);
    if (receipt === null) return { result: 'refused', code: 'BAD_REQUEST' };
    return this.db.transaction(async (tx): Promise<GatewayAnswer> => {
      const [existing] = await tx.query<ReceiptRow>(`SELECT ${ROW_COLUMNS} FROM sim_receipts WHERE receipt_id = $1`, [receipt.id]);
      if (existing) return answerOf(existing);
      const [fenced] = await tx.query('SELECT 1 FROM sim_receipt_fences WHERE receipt_id = $1', [receipt.id]);
      if (fenced) return { result: 'refused', code: 'FENCED' };
      if (Date.now() > receipt.deadlineMs) return { result: 'refused', code: 'DEADLINE_PASSED' };
      const refused = receipt.lines.some((line) => line.code === REFUSED_TEST_CODE);
      const sign = String(randomInt(0, 10 ** SIGN_DIGITS)).padStart(SIGN_DIGITS, '0');
      const [row] = await tx.query<ReceiptRow>(
        refused
          ? `INSERT INTO sim_receipts (receipt_id, type, amount, status, failure_code) VALUES ($1, $2, $3, 'REFUSED', 'INVALID_CODE') RETURNING ${ROW_COLUMNS}`
          : `INSERT INTO sim_receipts (receipt_id, type, amount, status, terminal_id, receipt_number, fiscal_sign)
             VALUES ($1, $2, $3, 'REGISTERED', $4, nextval('sim_receipt_numbers'), $5) RETURNING ${ROW_COLUMNS}`,
        refused ? [receipt.id, receipt.type, receipt.amount] : [receipt.id, receipt.type, receipt.amount, SIM_TERMINAL_ID, sign],
      );
      return answerOf(row!);
    });
  }

  /** What a repeated registration would answer, without registering: ok, refused (a fence included), or not_found. */
  async status(body: Body): Promise<GatewayAnswer> {
    if (!isId(body.id)) return { result: 'refused', code: 'BAD_REQUEST' };
    const [row] = await this.db.query<ReceiptRow>(`SELECT ${ROW_COLUMNS} FROM sim_receipts WHERE receipt_id = $1`, [body.id]);
    if (row) return answerOf(row);
    const [fenced] = await this.db.query('SELECT 1 FROM sim_receipt_fences WHERE receipt_id = $1', [body.id]);
    return fenced ? { result: 'refused', code: 'FENCED' } : { result: 'not_found' };
  }

  /** Settles a receipt id for good: what it was, or a fence after which it is never registered (one transaction). */
  async fence(body: Body): Promise<GatewayAnswer> {
    const id = body.id;
    if (!isId(id)) return { result: 'refused', code: 'BAD_REQUEST' };
    return this.db.transaction(async (tx): Promise<GatewayAnswer> => {
      const [row] = await tx.query<ReceiptRow>(`SELECT ${ROW_COLUMNS} FROM sim_receipts WHERE receipt_id = $1`, [id]);
      if (row) return answerOf(row);
      await tx.query('INSERT INTO sim_receipt_fences (receipt_id) VALUES ($1) ON CONFLICT (receipt_id) DO NOTHING', [id]);
      return { result: 'fenced' };
    });
  }

  /** The registrations of [from, to), oldest first. */
  async list(body: Body): Promise<GatewayAnswer> {
    const from = typeof body.from === 'string' ? Date.parse(body.from) : NaN;
    const to = typeof body.to === 'string' ? Date.parse(body.to) : NaN;
    const limit = body.limit;
    if (Number.isNaN(from) || Number.isNaN(to) || !Number.isSafeInteger(limit) || (limit as number) < 1 || (limit as number) > RECEIPTS_LIMIT_MAX) {
      return { result: 'refused', code: 'BAD_REQUEST' };
    }
    const rows = await this.db.query<ReceiptRow>(
      `SELECT ${ROW_COLUMNS} FROM sim_receipts WHERE status = 'REGISTERED' AND created_at >= $1 AND created_at < $2
        ORDER BY created_at, receipt_number LIMIT $3`,
      [new Date(from), new Date(to), limit],
    );
    return { result: 'ok', receipts: rows.map(registered) };
  }

  /** The latest registrations, newest first: the ground truth for people and tests on this machine. */
  async recent(limit: number): Promise<ReturnType<typeof registered>[]> {
    const rows = await this.db.query<ReceiptRow>(
      `SELECT ${ROW_COLUMNS} FROM sim_receipts WHERE status = 'REGISTERED' ORDER BY created_at DESC, receipt_number DESC LIMIT $1`,
      [limit],
    );
    return rows.map(registered);
  }
}
