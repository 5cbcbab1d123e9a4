// What the console's pages are given: the services they call, and where the service is reached from outside.
import type { ActivationsService } from '../../modules/activations/service.js';
import type { ChecksService } from '../../modules/checks/service.js';
import type { OperatorActions } from '../../modules/operators/actions.js';
import type { OperatorsService } from '../../modules/operators/service.js';
import type { ProductsService } from '../../modules/products/service.js';
import type { SupportService } from '../../modules/support/service.js';

export interface ConsoleDeps {
  operators: OperatorsService;
  /** What operators do to products, audited: the API's own actions. */
  actions: OperatorActions;
  activations: ActivationsService;
  products: ProductsService;
  checks: ChecksService;
  /** Any payment, order, refund, payout or receipt by id, or a payment by its card's last four, amount and day. */
  support: SupportService;
  /** The public address of the service (TOLOV_CHECKOUT_URL): a POST must come from it. */
  publicUrl: string;
}
