// Going live: a signed-up merchant's owner submits who the business is and where its live payouts go; Tolov's operator
// approves it (live mode on, the live payout account set from it, in one transaction) or rejects it with a reason the
// merchant reads, corrects and submits again.
import type { Db, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { ApiError, notFound } from '../../core/errors.js';
import type { Answer, Commands, Invocation } from '../../core/commands.js';
import type { List } from '../../core/pagination.js';
import type { PayoutsService } from '../payouts/service.js';
import { assertAccountNumber } from '../payouts/service.js';
import type { ProductsService } from '../products/service.js';
import type { Activation, ActivationInput, ActivationsQuery } from './schema.js';
import * as store from './store.js';
import type { ActivationRow } from './store.js';

export function presentActivation(row: ActivationRow): Activation {
  return {
    object: 'activation',
    product: row.product_id,
    productName: row.product_name,
    status: row.status,
    legalName: row.legal_name,
    tin: row.tin,
    legalAddress: row.legal_address,
    website: row.website,
    category: row.category,
    payoutAccount: { bankMfo: row.bank_mfo, accountLast4: row.account_number.slice(-4), tin: row.holder_tin, holderName: row.holder_name },
    rejectionReason: row.rejection_reason,
    submitted: row.submitted_at.toISOString(),
    decided: row.decided_at?.toISOString() ?? null,
  };
}

export class ActivationsService {
  constructor(
    private readonly db: Db,
    private readonly products: Pick<ProductsService, 'find' | 'enableLive'>,
    private readonly payouts: Pick<PayoutsService, 'recordAccount'>,
    private readonly commands: Commands,
  ) {}

  /** The product's request as it stands; null while none was submitted. */
  async of(productId: string): Promise<Activation | null> {
    const row = await store.findActivation(this.db, productId);
    return row ? presentActivation(row) : null;
  }

  /**
   * The owner's submission (the dashboard checks the role and the second factor first): a first one, or a corrected
   * one after a rejection; audited. Refused while one is under review, once approved, or when live mode is on already.
   */
  submit(invocation: Invocation, input: ActivationInput): Promise<Answer<Activation>> {
    const { scope } = invocation;
    if (scope.actor.kind !== 'user') throw new Error('an activation request is submitted by a dashboard user');
    assertAccountNumber(input);
    const { userId } = scope.actor;
    const write = async (tx: Transaction) => {
      const product = await this.products.find(scope.productId, tx);
      if (product.live_enabled) throw new ApiError('INVALID_STATE', 'Live mode is on for this product already');
      if (!(await store.submit(tx, scope.productId, input, userId))) {
        const current = await store.findActivation(tx, scope.productId);
        throw new ApiError('INVALID_STATE', `The request is ${current?.status === 'approved' ? 'approved already' : 'under review: Tolov answers it first'}`);
      }
      return presentActivation((await store.findActivation(tx, scope.productId))!);
    };
    return this.commands.change(invocation, 200, write, { audit: { action: 'activation.submitted', target: input.legalName } });
  }

  /** The operator's queue: a page of requests in `status` when given, newest first, or oldest first as it is worked. */
  async list(query: ActivationsQuery, oldestFirst = false): Promise<List<Activation>> {
    if (query.starting_after !== undefined && !(await store.findActivation(this.db, query.starting_after))) {
      throw new ApiError('VALIDATION_ERROR', 'starting_after must be the product id of a request in this list', { param: 'starting_after' });
    }
    const rows = await store.listActivations(this.db, { status: query.status ?? null, after: query.starting_after ?? null, limit: query.limit + 1, oldestFirst });
    return { object: 'list', data: rows.slice(0, query.limit).map(presentActivation), has_more: rows.length > query.limit };
  }

  async get(productId: string): Promise<Activation> {
    const row = await store.findActivation(this.db, productId);
    if (!row) throw notFound('activation request');
    return presentActivation(row);
  }

  /**
   * Approves a submitted request, once: live mode on and the live payout account the request names, announced by
   * `payout_account.updated`, in the operator's transaction.
   */
  async approve(productId: string, tx: Transaction): Promise<Activation> {
    const row = await this.#decide(tx, productId, { status: 'approved' });
    await this.products.enableLive(productId, tx);
    const live: Pick<Merchant, 'productId' | 'livemode'> = { productId, livemode: true };
    await this.payouts.recordAccount(tx, live, { bankMfo: row.bank_mfo, accountNumber: row.account_number, tin: row.holder_tin, holderName: row.holder_name });
    return presentActivation((await store.findActivation(tx, productId))!);
  }

  /** Rejects a submitted request with what the merchant must correct, in the operator's transaction. */
  async reject(productId: string, reason: string, tx: Transaction): Promise<Activation> {
    await this.#decide(tx, productId, { status: 'rejected', reason });
    return presentActivation((await store.findActivation(tx, productId))!);
  }

  /** Decides a request that is under review; 404 without one, 409 once decided. */
  async #decide(tx: Transaction, productId: string, decision: Parameters<typeof store.decide>[2]): Promise<ActivationRow> {
    const row = await store.findActivation(tx, productId, true);
    if (!row) throw notFound('activation request');
    if (!(await store.decide(tx, productId, decision))) throw new ApiError('INVALID_STATE', `The request is ${row.status} already: only a submitted one is decided`);
    return row;
  }
}
