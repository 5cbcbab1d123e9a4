// Who a merchant request acts for: resolved once (from its API key, or from a dashboard session), then handed to every
// service it calls.

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
}

/** The actor as a name: an idempotency key's stored answer is replayed to this actor alone. */
export const actorName = (actor: Actor): string => (actor.kind === 'api_key' ? actor.keyId : `user:${actor.userId}`);
