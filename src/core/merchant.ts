// Who a merchant request acts for: resolved from its API key once, then handed to every service it calls.

/** What a product may do; each merchant route needs one. */
export type Scope = 'sale_of_goods' | 'subscribe';

export interface Merchant {
  keyId: string;
  productId: string;
  productName: string;
  livemode: boolean;
  scopes: Scope[];
  feeBps: number;
}
