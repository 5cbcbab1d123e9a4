// What operators do to merchants' products, the same from the console and from the operator API: each change made
// and written to the audit log in one transaction.
import type { Activation } from '../activations/schema.js';
import type { ActivationsService } from '../activations/service.js';
import type { ProductsService } from '../products/service.js';
import type { OperatorsService } from './service.js';
import type { OperatorActor } from './store.js';

type ProductRow = Awaited<ReturnType<ProductsService['find']>>;

export class OperatorActions {
  constructor(
    private readonly operators: OperatorsService,
    private readonly products: ProductsService,
    private readonly activations: ActivationsService,
  ) {}

  approve(actor: OperatorActor, productId: string): Promise<Activation> {
    return this.operators.act(actor, { action: 'activation.approved', target: productId }, (tx) => this.activations.approve(productId, tx));
  }

  reject(actor: OperatorActor, productId: string, reason: string): Promise<Activation> {
    return this.operators.act(actor, { action: 'activation.rejected', target: productId, detail: reason }, (tx) => this.activations.reject(productId, reason, tx));
  }

  suspend(actor: OperatorActor, productId: string, reason: string): Promise<ProductRow> {
    return this.operators.act(actor, { action: 'product.suspended', target: productId, detail: reason }, (tx) => this.products.setSuspended(productId, reason, tx));
  }

  resume(actor: OperatorActor, productId: string): Promise<ProductRow> {
    return this.operators.act(actor, { action: 'product.resumed', target: productId }, (tx) => this.products.setSuspended(productId, null, tx));
  }

  /** The product's fee and whether its live payments need fiscal lines; the entry says what changed to what. */
  updateSettings(actor: OperatorActor, productId: string, change: { receiptRequired?: boolean; feeBps?: number }): Promise<ProductRow> {
    const detail = Object.entries(change)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => `${name} = ${String(value)}`)
      .join(', ');
    return this.operators.act(actor, { action: 'product.updated', target: productId, detail }, (tx) => this.products.updateSettings(productId, change, tx));
  }

  enableLive(actor: OperatorActor, productId: string): Promise<ProductRow> {
    return this.operators.act(actor, { action: 'product.live_enabled', target: productId }, (tx) => this.products.enableLive(productId, tx));
  }

  /** A product made by the operator, with a test and a live key; the entry names it, never a secret. */
  async createProduct(actor: OperatorActor, input: Parameters<ProductsService['create']>[0]) {
    return this.operators.actOn(actor, 'product.created', (tx) => this.products.create(input, tx), (made) => ({ target: made.product.id, detail: made.product.name }));
  }

  addKey(actor: OperatorActor, productId: string, input: Parameters<ProductsService['addKey']>[1]) {
    return this.operators.actOn(actor, 'api_key.created', (tx) => this.products.addKey(productId, input, tx), (made) => ({ target: productId, detail: `${made.row.id} (${input.mode})` }));
  }

  revokeKey(actor: OperatorActor, keyId: string) {
    return this.operators.actOn(actor, 'api_key.revoked', (tx) => this.products.revokeKey(keyId, tx), (row) => ({ target: row.product_id, detail: keyId }));
  }

  changeBranding(actor: OperatorActor, productId: string, change: Parameters<ProductsService['changeBranding']>[1]) {
    return this.operators.act(actor, { action: 'product.branding_changed', target: productId }, (tx) => this.products.changeBranding(productId, change, tx));
  }
}
