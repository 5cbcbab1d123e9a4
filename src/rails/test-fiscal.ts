// The test fiscal module: signs every receipt at once, except one with an item code of seventeen zeros, which it
// refuses (INVALID_CODE) so that failures can be tried. It keeps its register in the database, so that each id is
// registered once, `status` tells the truth after a restart, and a fence is kept.
import { createHash } from 'node:crypto';
import type { Db } from '../db/types.js';
import type { FiscalModule, FiscalOutcome, FiscalReceipt, RegisteredReceipt, Registration } from './fiscal.js';

export const TEST_TERMINAL_ID = 'TEST00000001';
/** The item code that makes the test module refuse a receipt. */
export const REFUSED_TEST_CODE = '00000000000000000';

interface RegisterRow {
  status: 'REGISTERED' | 'REFUSED' | 'FENCED';
  receipt_number: string;
  failure_code: string | null;
  registered_at: Date;
}

/** Twelve digits that only this receipt and number give, as a real module's signature would be. */
function signOf(id: string, receiptNumber: string): string {
  const digest = createHash('sha256').update(`tolov-test-fiscal:${id}:${receiptNumber}`).digest();
  return (digest.readBigUInt64BE(0) % 1_000_000_000_000n).toString().padStart(12, '0');
}

function outcomeOf(id: string, row: RegisterRow): Registration | { status: 'REFUSED'; failureCode: string } | { status: 'FENCED' } {
  if (row.status === 'FENCED') return { status: 'FENCED' };
  if (row.status === 'REFUSED') return { status: 'REFUSED', failureCode: row.failure_code! };
  return { status: 'REGISTERED', terminalId: TEST_TERMINAL_ID, receiptNumber: row.receipt_number, fiscalSign: signOf(id, row.receipt_number), registeredAt: row.registered_at };
}

const ROW_COLUMNS = 'status, receipt_number::text AS receipt_number, failure_code, registered_at';

export class TestFiscalModule implements FiscalModule {
  /** Calls are local database statements, bounded by the statement timeout. */
  readonly callWindowMs = 15_000;

  constructor(private readonly db: Db) {}

  async register(receipt: FiscalReceipt): Promise<FiscalOutcome> {
    const refused = receipt.lines.some((line) => line.code === REFUSED_TEST_CODE);
    const [inserted] = await this.db.query<RegisterRow>(
      `INSERT INTO test_fiscal_receipts (receipt_id, status, type, amount, failure_code) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (receipt_id) DO NOTHING RETURNING ${ROW_COLUMNS}`,
      [receipt.id, refused ? 'REFUSED' : 'REGISTERED', receipt.type, receipt.amount, refused ? 'INVALID_CODE' : null],
    );
    const row = inserted ?? (await this.#find(receipt.id));
    if (!row) throw new Error(`test fiscal module: receipt ${receipt.id} conflicted but is not there`);
    const outcome = outcomeOf(receipt.id, row);
    // A receipt fenced before it was registered is refused for good.
    return outcome.status === 'FENCED' ? { status: 'REFUSED', failureCode: 'FENCED' } : outcome;
  }

  async status(id: string): Promise<FiscalOutcome | { status: 'NOT_FOUND' }> {
    const row = await this.#find(id);
    if (!row || row.status === 'FENCED') return { status: 'NOT_FOUND' };
    return outcomeOf(id, row) as FiscalOutcome;
  }

  async fence(id: string) {
    await this.db.query(`INSERT INTO test_fiscal_receipts (receipt_id, status) VALUES ($1, 'FENCED') ON CONFLICT (receipt_id) DO NOTHING`, [id]);
    const row = await this.#find(id);
    if (!row) throw new Error(`test fiscal module: receipt ${id} neither fenced nor found`);
    return outcomeOf(id, row);
  }

  async registrations(from: Date, to: Date, limit: number): Promise<RegisteredReceipt[]> {
    return this.db.query<RegisteredReceipt>(
      `SELECT receipt_id AS id, type, amount FROM test_fiscal_receipts
        WHERE status = 'REGISTERED' AND registered_at >= $1 AND registered_at < $2 ORDER BY registered_at, receipt_id LIMIT $3`,
      [from, to, limit],
    );
  }

  async #find(id: string): Promise<RegisterRow | undefined> {
    const [row] = await this.db.query<RegisterRow>(`SELECT ${ROW_COLUMNS} FROM test_fiscal_receipts WHERE receipt_id = $1`, [id]);
    return row;
  }
}
