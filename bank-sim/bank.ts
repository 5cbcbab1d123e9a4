// The simulated bank's books: its cards, tokens, SMS codes and money operations, in its own database. Every money
// operation executes at most once per id, in one transaction with the balance it moves.
import { createHash, randomInt } from 'node:crypto';
import type { Db, Transaction } from '../src/db/types.js';
import { accountKeyValid } from '../src/modules/payouts/account-number.js';
import { randomBase62 } from '../src/lib/random.js';
import { luhnValid } from '../src/rails/card-data.js';
import type { GatewayAnswer } from '../src/rails/protocol.js';
import { TEST_CARDS } from '../src/rails/test-cards.js';

export const SIM_PHONE = '998901234567';
const OPENING_BALANCE = 1_000_000_000_000;
export const OPERATIONS_LIMIT_MAX = 10_000;

type Body = Record<string, unknown>;
interface CardOfToken {
  behaviour: string;
  status: string;
  pan_hash: string;
  balance: number;
  phone: string;
}
interface OperationRow {
  status: string;
  failure_code: string | null;
}

const hashPan = (pan: string) => createHash('sha256').update(`tolov-bank-sim:${pan}`).digest('hex');

const operationAnswer = (row: OperationRow): GatewayAnswer =>
  row.status === 'SUCCEEDED' ? { result: 'ok', status: 'SUCCEEDED' } : { result: 'refused', code: row.failure_code! };

/** Why a debit of `amount` on a card fails, or null when it goes through. */
function debitFailure(card: CardOfToken, locked: { balance: number; status: string }, amount: number): string | null {
  if (card.behaviour === 'insufficient_funds' || locked.balance < amount) return 'INSUFFICIENT_FUNDS';
  if (card.behaviour === 'blocked' || locked.status !== 'ACTIVE') return 'CARD_BLOCKED';
  if (card.behaviour === 'unclear_then_fails') return 'PROCESSING_ERROR';
  return null;
}

export class Bank {
  constructor(
    private readonly db: Db,
    /** Prints each SMS code, as a phone would show it. */
    private readonly printSms: boolean,
  ) {}

  /** Issues the test cards of docs/testing.md, as the test rail does (once: a restarted bank keeps its balances). */
  async issueTestCards(): Promise<void> {
    for (const [pan, behaviour] of Object.entries(TEST_CARDS)) {
      await this.db.query(
        `INSERT INTO sim_cards (pan_hash, last4, network, behaviour, phone, status, balance) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (pan_hash) DO NOTHING`,
        [hashPan(pan), pan.slice(-4), pan.startsWith('9860') ? 'humo' : 'uzcard', behaviour, SIM_PHONE, behaviour === 'inactive' ? 'INACTIVE' : 'ACTIVE', OPENING_BALANCE],
      );
    }
  }

  async tokenize(body: Body): Promise<GatewayAnswer> {
    const { pan, phone } = body as { pan?: unknown; phone?: unknown };
    if (typeof pan !== 'string' || !/^\d{16}$/.test(pan) || !luhnValid(pan) || typeof phone !== 'string') return { result: 'refused', code: 'BAD_REQUEST' };
    const [card] = await this.db.query<{ status: string; network: string; phone: string }>('SELECT status, network, phone FROM sim_cards WHERE pan_hash = $1', [
      hashPan(pan),
    ]);
    if (!card || card.status !== 'ACTIVE' || card.phone !== phone) return { result: 'refused', code: 'CARD_INACTIVE' };
    const token = `bk_${randomBase62(32)}`;
    await this.db.query('INSERT INTO sim_tokens (token, pan_hash, phone) VALUES ($1, $2, $3)', [token, hashPan(pan), phone]);
    return { result: 'ok', token, network: card.network };
  }

  async sendCode(body: Body): Promise<GatewayAnswer> {
    const token = String(body.token);
    const card = await this.#ownerOf(token);
    if (!card) return { result: 'refused', code: 'UNKNOWN_TOKEN' };
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    await this.db.query('INSERT INTO sim_sms (phone, token, code) VALUES ($1, $2, $3)', [card.phone, token, code]);
    if (this.printSms) process.stdout.write(`bank-sim: SMS to ${card.phone}: your code is ${code}\n`);
    return { result: 'ok' };
  }

  async verifyCode(body: Body): Promise<GatewayAnswer> {
    const [last] = await this.db.query<{ code: string }>('SELECT code FROM sim_sms WHERE token = $1 ORDER BY id DESC LIMIT 1', [String(body.token)]);
    return last && last.code === body.code ? { result: 'ok' } : { result: 'refused', code: 'WRONG_CODE' };
  }

  /**
   * Executes a card's debit or refund once per id; never once fenced or past its deadline (checked in its transaction,
   * after any latency: the fence and the clock decide, not the order of arrival).
   */
  async execute(type: 'debit' | 'refund' | 'hold', body: Body): Promise<GatewayAnswer> {
    const { operationId, token, amount, deadline } = body as { operationId?: unknown; token?: unknown; amount?: unknown; deadline?: unknown };
    const deadlineMs = typeof deadline === 'string' ? Date.parse(deadline) : NaN;
    if (typeof operationId !== 'string' || typeof token !== 'string' || !Number.isSafeInteger(amount) || (amount as number) <= 0 || Number.isNaN(deadlineMs)) {
      return { result: 'refused', code: 'BAD_REQUEST' };
    }
    const card = await this.#ownerOf(token);
    if (!card) return { result: 'refused', code: 'UNKNOWN_TOKEN' };
    const row = await this.#once({ operationId, type, token, amount: amount as number, deadlineMs }, async (tx) => {
      const [locked] = await tx.query<{ balance: number; status: string }>('SELECT balance, status FROM sim_cards WHERE pan_hash = $1 FOR UPDATE', [card.pan_hash]);
      const failure = type === 'refund' ? null : debitFailure(card, locked!, amount as number);
      const delta = failure ? 0 : type === 'refund' ? (amount as number) : -(amount as number);
      if (delta !== 0) await tx.query('UPDATE sim_cards SET balance = balance + $2 WHERE pan_hash = $1', [card.pan_hash, delta]);
      return failure;
    });
    const unclear =
      (type !== 'refund' && (card.behaviour === 'unclear_then_succeeds' || card.behaviour === 'unclear_then_fails')) ||
      (type === 'refund' && card.behaviour === 'refund_unclear_then_succeeds');
    return unclear ? { result: 'pending' } : operationAnswer(row);
  }

  /**
   * Ends a hold once, under the same fence and deadline: a capture takes `amount` of it (at most what it held) and
   * returns the rest to the card, a release returns all of it. The hold's row is locked, so two ends of one hold are
   * decided one after the other: the second is refused HOLD_NOT_ACTIVE.
   */
  async endHold(type: 'capture' | 'release', body: Body): Promise<GatewayAnswer> {
    const { operationId, holdOperationId, amount, deadline } = body as Record<string, unknown>;
    const deadlineMs = typeof deadline === 'string' ? Date.parse(deadline) : NaN;
    if (typeof operationId !== 'string' || typeof holdOperationId !== 'string' || !Number.isSafeInteger(amount) || (amount as number) <= 0 || Number.isNaN(deadlineMs)) {
      return { result: 'refused', code: 'BAD_REQUEST' };
    }
    const operation = { operationId, type, token: holdOperationId, amount: amount as number, deadlineMs, holdOperationId };
    return operationAnswer(
      await this.#once(operation, async (tx) => {
        const [hold] = await tx.query<{ token: string; amount: number }>(
          `SELECT token, amount FROM sim_operations WHERE operation_id = $1 AND type = 'hold' AND status = 'SUCCEEDED' FOR UPDATE`,
          [holdOperationId],
        );
        const [ended] = await tx.query('SELECT 1 FROM sim_operations WHERE hold_operation_id = $1 AND status = $2', [holdOperationId, 'SUCCEEDED']);
        if (!hold || ended) return 'HOLD_NOT_ACTIVE';
        if ((amount as number) > hold.amount) return 'AMOUNT_EXCEEDS_HOLD';
        const returned = type === 'capture' ? hold.amount - (amount as number) : hold.amount;
        await tx.query('UPDATE sim_cards SET balance = balance + $2 FROM sim_tokens t WHERE t.token = $1 AND sim_cards.pan_hash = t.pan_hash', [hold.token, returned]);
        return null;
      }),
    );
  }

  /**
   * Credits a bank account with a merchant's payout, once per id, under the same fence and deadline as a card's
   * operation. Accounts are opened on their first credit; as in test mode, one ending 0002 is closed and one ending
   * 0003 is credited with its answer left pending.
   */
  async transfer(body: Body): Promise<GatewayAnswer> {
    const { operationId, amount, bankMfo, accountNumber, holderName, deadline } = body as Record<string, unknown>;
    const deadlineMs = typeof deadline === 'string' ? Date.parse(deadline) : NaN;
    const accountValid = typeof bankMfo === 'string' && typeof accountNumber === 'string' && accountKeyValid(bankMfo, accountNumber);
    if (typeof operationId !== 'string' || !accountValid || typeof holderName !== 'string' || !Number.isSafeInteger(amount) || (amount as number) <= 0 || Number.isNaN(deadlineMs)) {
      return { result: 'refused', code: 'BAD_REQUEST' };
    }
    const account = `${bankMfo as string}/${accountNumber as string}`;
    const row = await this.#once({ operationId, type: 'transfer', token: account, amount: amount as number, deadlineMs }, async (tx) => {
      if ((accountNumber as string).endsWith('0002')) return 'ACCOUNT_CLOSED';
      await tx.query(
        `INSERT INTO sim_accounts (account, holder_name, balance) VALUES ($1, $2, $3)
         ON CONFLICT (account) DO UPDATE SET balance = sim_accounts.balance + EXCLUDED.balance`,
        [account, holderName, amount],
      );
      return null;
    });
    return (accountNumber as string).endsWith('0003') ? { result: 'pending' } : operationAnswer(row);
  }

  /** An operation's one execution: its earlier outcome, a refusal once fenced or late, or `move` and its record. */
  #once(
    operation: { operationId: string; type: string; token: string; amount: number; deadlineMs: number; holdOperationId?: string },
    move: (tx: Transaction) => Promise<string | null>,
  ): Promise<OperationRow> {
    return this.db.transaction(async (tx): Promise<OperationRow> => {
      const [existing] = await tx.query<OperationRow>('SELECT status, failure_code FROM sim_operations WHERE operation_id = $1', [operation.operationId]);
      if (existing) return existing;
      const [fenced] = await tx.query('SELECT 1 FROM sim_fences WHERE operation_id = $1', [operation.operationId]);
      if (fenced) return { status: 'FAILED', failure_code: 'FENCED' };
      if (Date.now() > operation.deadlineMs) return { status: 'FAILED', failure_code: 'DEADLINE_PASSED' };
      const failure = await move(tx);
      const status = failure ? 'FAILED' : 'SUCCEEDED';
      await tx.query(
        'INSERT INTO sim_operations (operation_id, type, token, amount, status, failure_code, hold_operation_id) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [operation.operationId, operation.type, operation.token, operation.amount, status, failure, operation.holdOperationId ?? null],
      );
      return { status, failure_code: failure };
    });
  }

  /** What the bank holds for an account it credited: its balance, or null when it never received a transfer. */
  async accountBalance(account: string): Promise<number | null> {
    const [row] = await this.db.query<{ balance: string }>('SELECT balance::text FROM sim_accounts WHERE account = $1', [account]);
    return row ? Number(row.balance) : null;
  }

  async status(body: Body): Promise<GatewayAnswer> {
    const [row] = await this.db.query<OperationRow>('SELECT status, failure_code FROM sim_operations WHERE operation_id = $1', [String(body.operationId)]);
    return row ? operationAnswer(row) : { result: 'not_found' };
  }

  /**
   * Settles an operation for good: what it was if executed, or a fence that keeps it from ever executing. The fence
   * and the execution are each one transaction on the bank's one session, so exactly one of them comes first.
   */
  async fence(body: Body): Promise<GatewayAnswer> {
    const operationId = body.operationId;
    if (typeof operationId !== 'string' || operationId === '') return { result: 'refused', code: 'BAD_REQUEST' };
    return this.db.transaction(async (tx): Promise<GatewayAnswer> => {
      const [row] = await tx.query<OperationRow>('SELECT status, failure_code FROM sim_operations WHERE operation_id = $1', [operationId]);
      if (row) return operationAnswer(row);
      await tx.query('INSERT INTO sim_fences (operation_id) VALUES ($1) ON CONFLICT (operation_id) DO NOTHING', [operationId]);
      return { result: 'fenced' };
    });
  }

  async list(body: Body): Promise<GatewayAnswer> {
    const from = String(body.from ?? '1970-01-01T00:00:00Z');
    const to = String(body.to ?? '9999-01-01T00:00:00Z');
    const limit = Math.min(Number(body.limit ?? OPERATIONS_LIMIT_MAX), OPERATIONS_LIMIT_MAX);
    const after = typeof body.after === 'string' ? body.after : null;
    const rows = await this.db.query<{ operation_id: string; type: string; amount: number; status: string; failure_code: string | null; created_at: Date }>(
      `SELECT operation_id, type, amount, status, failure_code, created_at FROM sim_operations
        WHERE created_at >= $1 AND created_at < $2 AND ($3::text IS NULL OR operation_id > $3 COLLATE "C")
        ORDER BY operation_id COLLATE "C" LIMIT $4`,
      [from, to, after, limit],
    );
    const operations = rows.map((row) => ({
      operationId: row.operation_id,
      type: row.type,
      amount: row.amount,
      status: row.status,
      failureCode: row.failure_code,
      createdAt: row.created_at.toISOString(),
    }));
    return { result: 'ok', operations };
  }

  /** The last SMS sent to `phone`, for people and tests on this machine. */
  async lastSms(phone: string): Promise<{ phone: string; code: string; sentAt: string } | null> {
    const [row] = await this.db.query<{ phone: string; code: string; sent_at: Date }>('SELECT phone, code, sent_at FROM sim_sms WHERE phone = $1 ORDER BY id DESC LIMIT 1', [
      phone,
    ]);
    return row ? { phone: row.phone, code: row.code, sentAt: row.sent_at.toISOString() } : null;
  }

  async recentOperations(limit: number): Promise<{ operationId: string; type: string; amount: number; status: string }[]> {
    const rows = await this.db.query<{ operation_id: string; type: string; amount: number; status: string }>(
      'SELECT operation_id, type, amount, status FROM sim_operations ORDER BY created_at DESC LIMIT $1',
      [limit],
    );
    return rows.map((row) => ({ operationId: row.operation_id, type: row.type, amount: row.amount, status: row.status }));
  }

  #ownerOf(token: string): Promise<CardOfToken | undefined> {
    return this.db
      .query<CardOfToken>('SELECT c.behaviour, c.status, c.pan_hash, c.balance, t.phone FROM sim_tokens t JOIN sim_cards c ON c.pan_hash = t.pan_hash WHERE t.token = $1', [token])
      .then((rows) => rows[0]);
  }
}
