// Turns on the embedded engine's one session, given in the order asked.

/** Callers waiting for a turn; past it a call is refused rather than queued without bound. */
const WAITING_MAX = 10_000;

/**
 * Who may send next. Statements outside a transaction go at once, one after another: the engine runs them in the
 * order sent, so none waits for the one before to be answered. A transaction has the session to itself from its
 * BEGIN until its end is sent. A turn ends when its last exchange is sent, not answered; turns are given in the order
 * asked, so a stream of statements cannot keep a transaction waiting.
 */
export class Turns {
  #statements = 0;
  #transaction = false;
  readonly #waiting: { transaction: boolean; start: () => void }[] = [];

  /** Undefined when the turn is taken at once (the common case, with no promise to await). */
  take(transaction: boolean): Promise<void> | undefined {
    if (this.#waiting.length === 0 && this.#admits(transaction)) {
      this.#admit(transaction);
      return undefined;
    }
    if (this.#waiting.length >= WAITING_MAX) throw new Error(`More than ${WAITING_MAX} calls wait for the embedded database`);
    return new Promise((start) => this.#waiting.push({ transaction, start }));
  }

  end(transaction: boolean): void {
    if (transaction) this.#transaction = false;
    else this.#statements -= 1;
    while (this.#waiting.length > 0 && this.#admits(this.#waiting[0]!.transaction)) {
      const next = this.#waiting.shift()!;
      this.#admit(next.transaction);
      next.start();
    }
  }

  #admits(transaction: boolean): boolean {
    return !this.#transaction && (!transaction || this.#statements === 0);
  }

  #admit(transaction: boolean): void {
    if (transaction) this.#transaction = true;
    else this.#statements += 1;
  }
}
