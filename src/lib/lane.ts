/**
 * Work run at most `concurrency` at a time; the rest waits its turn in order, at most `waitingMax` of it, and past that
 * is refused at once without running.
 */
export class Lane {
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(
    private readonly concurrency: number,
    private readonly waitingMax: number,
  ) {}

  /** Runs `work` in its turn, or throws `refusal()` at once when as much work as the lane holds is there already. */
  async run<T>(work: () => Promise<T>, refusal: () => Error): Promise<T> {
    if (this.#running < this.concurrency) this.#running += 1;
    else if (this.#waiting.length < this.waitingMax) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else throw refusal();
    try {
      return await work();
    } finally {
      // The turn passes straight to the next in line, which counts as running already.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running -= 1;
    }
  }
}
