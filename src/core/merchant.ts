// Who a merchant request acts for: resolved once (from its API key, or from a dashboard session), then handed to every
// service it calls.
import { ApiError } from './errors.js';

/** What a product may do; each merchant route needs one. */
export type Scope = 'sale_of_goods' | 'subscribe';

/** Who acts on a product: its server, by an API key, or a user of its dashboard. */
export type Actor = { kind: 'api_key'; keyId: string } | { kind: 'user'; userId: string; accountId: string };

export interface Merchant {
  actor: Actor;
  productId: string;
  productName: string;
  livemode: boolean;
  scopes: Scope[];
  feeBps: number;
  /** Whether its live orders and charges must carry fiscal lines (the operator turns it off for those who fiscalize themselves). */
  receiptRequired: boolean;
  /** The operator suspended it: it may not move money, bind cards or make orders until resumed. */
  suspended: boolean;
}

/** Refuses what a suspended product may not do: take payments, bind cards, make orders, pay out. */
export function assertActive(merchant: Pick<Merchant, 'suspended'>): void {
  if (merchant.suspended) {
    throw new ApiError('PRODUCT_SUSPENDED', 'Tolov has suspended this product: it cannot take payments, bind cards, create orders or pay out until it is resumed. Reads and refunds of past payments still work');
  }
}

/** The actor as a name: an idempotency key's stored answer is replayed to this actor alone. */
export const actorName = (actor: Actor): string => (actor.kind === 'api_key' ? actor.keyId : `user:${actor.userId}`);
