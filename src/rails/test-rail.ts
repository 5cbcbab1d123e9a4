// The test rail: the deterministic test cards of docs/testing.md. It keeps its own books in the database (tokens and
// operations, never card numbers) so that an "ambiguous" debit has really happened, or really not, and `status`
// tells the truth after a restart.
import type { Db } from '../db/types.js';
import { setNewest } from '../lib/bounded-map.js';
import { groupWriter } from '../lib/group-writer.js';
import { NO_TIMINGS, type Recorder } from '../lib/timings.js';
import { randomBase62 } from '../lib/random.js';
import type { CardDetails, ExecutedOutcome, FenceOutcome, HoldEnd, MoneyOperation, OperationsQuery, OperationType, Rail, RailOutcome, RecordedOperation, TokenizeResult, TransferOperation } from './rail.js';
import { TEST_CARDS, type Behaviour } from './test-cards.js';

export const TEST_SMS_CODE = '111111';

interface Recorded {
  /** FENCED: asked about before it was ever recorded, so it never executes (migration 008). */
  status: 'SUCCEEDED' | 'FAILED' | 'FENCED';
  failure_code: string | null;
}

interface Operation {
  type: OperationType;
  operationId: string;
  /** The card's; a transfer to a bank account has none. */
  token: string | null;
  amount: number;
  /** The hold a capture or release ends. */
  holdOperationId: string | null;
  result: Recorded;
}

/** A fenced operation answers as what it is: a call that moved no money. */
const outcomeOf = (row: Recorded): ExecutedOutcome =>
  row.status === 'SUCCEEDED' ? { status: 'SUCCEEDED' } : { status: 'FAILED', failureCode: row.failure_code! };

/** Card behaviours remembered, most recent first. */
const BEHAVIOURS_CACHED_MAX = 10_000;

/** Operations written in one statement, and waiting for one: well above the requests a process serves at once. */
const RECORDING_LIMITS = { batchMax: 128, waitingMax: 10_000 };

/**
 * Records operations once each; a repeated operation id gets what was recorded the first time. Several calls'
 * operations are written in one statement, as a bank's books would batch them.
 */
async function recordOperations(db: Db, operations: Operation[]): Promise<Recorded[]> {
  const inserted = await db.query<Recorded & { operation_id: string }>(
    `INSERT INTO test_rail_operations (operation_id, type, token, amount, status, failure_code, hold_operation_id)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[])
     ON CONFLICT (operation_id) DO NOTHING
     RETURNING operation_id, status, failure_code`,
    [
      operations.map((o) => o.operationId),
      operations.map((o) => o.type),
      operations.map((o) => o.token),
      operations.map((o) => o.amount),
      operations.map((o) => o.result.status),
      operations.map((o) => o.result.failure_code),
      operations.map((o) => o.holdOperationId),
    ],
  );
  const recorded = new Map(inserted.map((row) => [row.operation_id, row]));
  const repeated = operations.filter((o) => !recorded.has(o.operationId)).map((o) => o.operationId);
  if (repeated.length > 0) {
    const existing = await db.query<Recorded & { operation_id: string }>(
      'SELECT operation_id, status, failure_code FROM test_rail_operations WHERE operation_id = ANY($1::text[])',
      [repeated],
    );
    for (const row of existing) recorded.set(row.operation_id, row);
  }
  return operations.map((o) => {
    const row = recorded.get(o.operationId);
    if (!row) throw new Error(`test rail: operation ${o.operationId} was neither recorded nor found`);
    return { status: row.status, failure_code: row.failure_code };
  });
}

/** What a debit of a card with each behaviour executes; the unclear ones answer UNKNOWN to the caller as well. */
const DEBIT_RESULTS: Readonly<Record<Behaviour, Recorded>> = {
  succeeds: { status: 'SUCCEEDED', failure_code: null },
  inactive: { status: 'SUCCEEDED', failure_code: null },
  insufficient_funds: { status: 'FAILED', failure_code: 'INSUFFICIENT_FUNDS' },
  unclear_then_succeeds: { status: 'SUCCEEDED', failure_code: null },
  unclear_then_fails: { status: 'FAILED', failure_code: 'PROCESSING_ERROR' },
  blocked: { status: 'FAILED', failure_code: 'CARD_BLOCKED' },
  refund_unclear_then_succeeds: { status: 'SUCCEEDED', failure_code: null },
};

/**
 * What a transfer to a test account executes, by the account number's last four digits (docs/testing.md): 0002 is a
 * closed account; 0003 is paid, but the answer is lost, so the payout waits IN_TRANSIT for reconciliation.
 */
function transferResult(accountNumber: string): { recorded: Recorded; unclear: boolean } {
  const last4 = accountNumber.slice(-4);
  if (last4 === '0002') return { recorded: { status: 'FAILED', failure_code: 'ACCOUNT_CLOSED' }, unclear: false };
  return { recorded: { status: 'SUCCEEDED', failure_code: null }, unclear: last4 === '0003' };
}

export class TestRail implements Rail {
  /** Calls are local database statements, bounded by the statement timeout. */
  readonly callWindowMs = 15_000;
  readonly #behaviours = new Map<string, Behaviour>();
  /** Each call answers once its operation's row is committed, written together with concurrent calls'. */
  readonly #record: (operation: Operation) => Promise<Recorded>;

  constructor(
    private readonly db: Db,
    timings: Recorder = NO_TIMINGS,
  ) {
    this.#record = groupWriter((operations) => recordOperations(db, operations), RECORDING_LIMITS, { recorder: timings, name: 'test rail operations' });
  }

  async tokenize(card: CardDetails): Promise<TokenizeResult> {
    const behaviour = TEST_CARDS[card.pan] ?? 'succeeds';
    if (behaviour === 'inactive') return { ok: false, refusal: 'CARD_INACTIVE' };
    const network = card.pan.startsWith('9860') ? 'humo' : 'uzcard';
    const token = `tr_${randomBase62(32)}`;
    await this.db.query('INSERT INTO test_rail_cards (token, network, behaviour) VALUES ($1, $2, $3)', [token, network, behaviour]);
    return { ok: true, token, network };
  }

  async sendCode(token: string): Promise<void> {
    await this.#behaviourOf(token);
  }

  async verifyCode(token: string, code: string): Promise<boolean> {
    await this.#behaviourOf(token);
    return code === TEST_SMS_CODE;
  }

  debit(operation: MoneyOperation): Promise<RailOutcome> {
    return this.#take('debit', operation);
  }

  /** Every card a debit succeeds on is held; the unclear ones answer UNKNOWN, as their debits do. */
  hold(operation: MoneyOperation): Promise<RailOutcome> {
    return this.#take('hold', operation);
  }

  capture(operation: HoldEnd): Promise<RailOutcome> {
    return this.#endHold('capture', operation);
  }

  release(operation: HoldEnd): Promise<RailOutcome> {
    return this.#endHold('release', operation);
  }

  async refund(operation: MoneyOperation & { debitOperationId: string }): Promise<RailOutcome> {
    const behaviour = await this.#behaviourOf(operation.token);
    const recorded = await this.#execute('refund', operation, { status: 'SUCCEEDED', failure_code: null });
    return behaviour === 'refund_unclear_then_succeeds' ? { status: 'UNKNOWN' } : outcomeOf(recorded);
  }

  async transfer(operation: TransferOperation): Promise<RailOutcome> {
    const { recorded, unclear } = transferResult(operation.accountNumber);
    const executed = await this.#record({ type: 'transfer', operationId: operation.operationId, token: null, amount: operation.amount, holdOperationId: null, result: recorded });
    return unclear ? { status: 'UNKNOWN' } : outcomeOf(executed);
  }

  async operations({ from, to, after, limit }: OperationsQuery): Promise<RecordedOperation[]> {
    const rows = await this.db.query<{ operation_id: string; type: RecordedOperation['type']; amount: number; status: 'SUCCEEDED' | 'FAILED'; created_at: Date }>(
      `SELECT operation_id, type, amount, status, created_at FROM test_rail_operations
        WHERE created_at >= $1 AND created_at < $2 AND status <> 'FENCED' AND ($3::text IS NULL OR operation_id > $3 COLLATE "C")
        ORDER BY operation_id COLLATE "C" LIMIT $4`,
      [from, to, after, limit],
    );
    return rows.map((row) => ({ operationId: row.operation_id, type: row.type, amount: row.amount, status: row.status, executedAt: row.created_at }));
  }

  /** An operation it never recorded is fenced: a write of it still on its way conflicts with the fence and executes nothing. */
  async fence(operationId: string): Promise<FenceOutcome> {
    const fenced = await this.db.query(
      `INSERT INTO test_rail_operations (operation_id, status, failure_code) VALUES ($1, 'FENCED', 'PROCESSING_ERROR')
       ON CONFLICT (operation_id) DO NOTHING RETURNING 1`,
      [operationId],
    );
    if (fenced.length === 1) return { status: 'FENCED' };
    // A new statement: it sees the row that conflicted, committed by now.
    const [row] = await this.db.query<Recorded>('SELECT status, failure_code FROM test_rail_operations WHERE operation_id = $1', [operationId]);
    if (!row) throw new Error(`test rail: operation ${operationId} conflicted but is not there`);
    return row.status === 'FENCED' ? { status: 'FENCED' } : outcomeOf(row);
  }

  /** A card's behaviour never changes once tokenized, so the rail remembers the most recent ones it read. */
  async #behaviourOf(token: string): Promise<Behaviour> {
    const known = this.#behaviours.get(token);
    if (known !== undefined) return known;
    const [card] = await this.db.query<{ behaviour: Behaviour }>('SELECT behaviour FROM test_rail_cards WHERE token = $1', [token]);
    if (!card) throw new Error('test rail: unknown card token');
    setNewest(this.#behaviours, token, card.behaviour, BEHAVIOURS_CACHED_MAX);
    return card.behaviour;
  }

  async #take(type: 'debit' | 'hold', operation: MoneyOperation): Promise<RailOutcome> {
    const behaviour = await this.#behaviourOf(operation.token);
    const recorded = await this.#execute(type, operation, DEBIT_RESULTS[behaviour]);
    const unclear = behaviour === 'unclear_then_succeeds' || behaviour === 'unclear_then_fails';
    return unclear ? { status: 'UNKNOWN' } : outcomeOf(recorded);
  }

  /**
   * A capture or release of a hold this rail made and has not ended. Tolov sends one end per hold at a time, so the
   * check and the write need no lock between them.
   */
  async #endHold(type: 'capture' | 'release', operation: HoldEnd): Promise<RailOutcome> {
    const [hold] = await this.db.query<{ amount: number; ended: boolean }>(
      `SELECT h.amount, EXISTS (SELECT 1 FROM test_rail_operations e WHERE e.hold_operation_id = h.operation_id AND e.status = 'SUCCEEDED') AS ended
         FROM test_rail_operations h WHERE h.operation_id = $1 AND h.type = 'hold' AND h.status = 'SUCCEEDED'`,
      [operation.holdOperationId],
    );
    const failure = !hold || hold.ended ? 'HOLD_NOT_ACTIVE' : operation.amount > hold.amount ? 'AMOUNT_EXCEEDS_HOLD' : null;
    const result: Recorded = failure === null ? { status: 'SUCCEEDED', failure_code: null } : { status: 'FAILED', failure_code: failure };
    return outcomeOf(await this.#execute(type, operation, result));
  }

  #execute(type: OperationType, operation: MoneyOperation | HoldEnd, result: Recorded): Promise<Recorded> {
    const holdOperationId = 'holdOperationId' in operation ? operation.holdOperationId : null;
    return this.#record({ type, operationId: operation.operationId, token: operation.token, amount: operation.amount, holdOperationId, result });
  }
}
