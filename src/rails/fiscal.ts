// The fiscal boundary: every receipt, in test mode and live mode alike, is registered through this interface with a
// fiscal module (a virtual cash register that signs receipts for the State Tax Committee).

export interface FiscalLine {
  title: string;
  price: number;
  count: number;
  code: string;
  packageCode: string;
  vatPercent: number;
  discount: number;
  commissionTin: string | null;
}

export interface FiscalReceipt {
  /** Made by Tolov, never by the client; the module registers each id at most once. */
  id: string;
  type: 'sale' | 'return';
  amount: number;
  vatAmount: number;
  /** The shipping is the last line when there is one. */
  lines: FiscalLine[];
}

/** What the module signed: the fields the buyer's QR code and the tax authority's check page name. */
export interface Registration {
  status: 'REGISTERED';
  terminalId: string;
  receiptNumber: string;
  fiscalSign: string;
  registeredAt: Date;
}

/**
 * The outcome of a registration. UNKNOWN means the answer was missing or unclear: the receipt may have been registered,
 * so the caller asks `status` about the same id before registering again.
 */
export type FiscalOutcome = Registration | { status: 'REFUSED'; failureCode: string } | { status: 'UNKNOWN' };

export interface FiscalModule {
  /** The longest a registration can take before it has certainly ended: the worker's lease exceeds it. */
  readonly callWindowMs: number;
  register(receipt: FiscalReceipt): Promise<FiscalOutcome>;
  /** What the module recorded under this id: NOT_FOUND when it never registered it (yet). */
  status(id: string): Promise<FiscalOutcome | { status: 'NOT_FOUND' }>;
  /**
   * Settles an id for good: its registration if there is one, or FENCED, after which the module refuses to register it
   * (a call still on its way moves nothing). Throws when the module cannot be reached.
   */
  fence(id: string): Promise<Registration | { status: 'REFUSED'; failureCode: string } | { status: 'FENCED' }>;
  /** The receipts the module registered in [from, to), oldest first, at most `limit`. */
  registrations(from: Date, to: Date, limit: number): Promise<RegisteredReceipt[]>;
}

export interface RegisteredReceipt {
  id: string;
  type: 'sale' | 'return';
  amount: number;
}
