// Starts the embedded engine on a thread of its own and sends it protocol bytes. On one thread, the engine's work and
// the HTTP layer's took turns on one core; apart, each has a core, and a connection is accepted while the engine works.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Exchange } from './wire.js';

export interface EngineStart {
  dataDir: string;
  loadDataDir?: Blob;
}
/** A waited exchange's `id` is its number, which its answer in the shared memory carries; a sent one's, its answer's. */
export type EngineRequest = { kind: 'exchange'; id: number; message: Uint8Array; waited: boolean } | { kind: 'stop' };
export type EngineAnswer =
  | { kind: 'ready' }
  | { kind: 'answer'; id: number; answer: Uint8Array }
  /** A failure of the engine itself (a database error is part of an answer): it is done for. Id 0 is the start. */
  | { kind: 'failed'; id: number; message: string };

/**
 * The answer to a waited exchange is written to memory both threads share, not posted: a posted message becomes
 * readable here tens of microseconds after it was sent (milliseconds at worst), a shared write at once. The first
 * three 32-bit words say: [0] the number of the exchange answered, written last (waited on), [1] what follows
 * (`WAITED`), [2] its length in bytes; the bytes follow. The memory grows to the largest answer, up to its limit.
 */
export const WAITED = {
  answer: 0,
  /** The text of the engine's failure: it is done for. */
  failed: 1,
  /** The text saying that this one answer was over the limit; the engine is fine. */
  tooLarge: 2,
} as const;
export const ANSWER_HEADER_BYTES = 12;
const ANSWER_BYTES_INITIAL = 64 * 1024;
export const ANSWER_BYTES_MAX = 64 * 1024 * 1024;
/**
 * How long either thread keeps looking for the other's next message before it sleeps: waking a sleeping thread takes
 * a hundred microseconds or more here, longer than a statement of a transaction takes to run.
 */
export const SPIN_MS = 0.1;
/** Exchanges sent and not yet answered; past it an exchange is refused rather than queued without bound. */
const IN_FLIGHT_MAX = 10_000;
/** How long this thread blocks for one answer inside a transaction before it gives the engine up as stuck. */
const ANSWER_WAIT_MS = 60_000;
/** Waited exchanges are numbered 1 to this, then from 1 again; 0 is the number of none. */
const WAITED_NUMBER_MAX = 2 ** 31 - 1;

// Built, the entry is JavaScript beside this file; from source (tests, the benchmark, the bank simulator) it is
// TypeScript, which the thread loads through tsx, as those run.
const ENTRY = new URL(`./thread-entry${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
const FROM_SOURCE = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(ENTRY.href)}); });`;

function startThread(workerData: EngineStart & { answers: SharedArrayBuffer }): Worker {
  return ENTRY.pathname.endsWith('.ts') ? new Worker(FROM_SOURCE, { eval: true, workerData }) : new Worker(ENTRY, { workerData });
}

export interface EngineThread {
  exchange: Exchange;
  /** Asks the engine to stop once it has answered what was sent before, and waits until its thread has ended. */
  stop: () => Promise<void>;
  /** Settles once the engine is done for without having been asked to stop: it failed, its thread ended, or it was stuck. */
  lost: Promise<Error>;
}

/** The engine's thread as seen from this one: exchanges in flight, the shared answer memory, and how it ends. */
class ThreadClient implements Exchange {
  readonly #inFlight = new Map<number, { resolve: (answer: Uint8Array) => void; reject: (error: Error) => void }>();
  readonly #header: Int32Array;
  #nextId = 1;
  #waitedNumber = 0;
  #stopping = false;
  #ended: Error | null = null;
  readonly lost: Promise<Error>;
  #markLost!: (error: Error) => void;
  readonly #exited: Promise<void>;

  constructor(
    private readonly worker: Worker,
    private readonly answers: SharedArrayBuffer,
    private readonly answerWaitMs: number,
  ) {
    this.#header = new Int32Array(answers, 0, 3);
    this.lost = new Promise<Error>((resolve) => (this.#markLost = resolve));
    this.#exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  }

  /** Resolves once the engine is ready; follows the thread's messages for as long as it runs. */
  ready(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const fail = (error: Error) => {
        reject(error);
        this.end(error);
      };
      this.worker.on('message', (message: EngineAnswer) => {
        if (message.kind === 'ready') return resolve();
        if (message.kind === 'answer') {
          const waiting = this.#inFlight.get(message.id);
          this.#inFlight.delete(message.id);
          return waiting?.resolve(message.answer);
        }
        if (message.id !== 0) return this.end(new Error(`The embedded database failed: ${message.message}`));
        fail(new Error(`The embedded database did not start: ${message.message}`));
      });
      this.worker.on('error', (error) => fail(new Error(`The embedded database thread failed: ${error.message}`)));
      this.worker.on('exit', (code) => fail(new Error(`The embedded database thread stopped (exit code ${code})`)));
    });
  }

  /**
   * Nothing is sent to the engine from now on and what waits for it is refused. Unless it was asked to stop, it is
   * lost, and its thread is ended: an engine given up as stuck must never answer late, as if to the next statement.
   */
  end(error: Error): void {
    if (this.#ended) return;
    this.#ended = error;
    for (const waiting of this.#inFlight.values()) waiting.reject(error);
    this.#inFlight.clear();
    if (this.#stopping) return;
    this.#markLost(error);
    void this.worker.terminate();
  }

  send(message: Uint8Array): Promise<Uint8Array> {
    if (this.#ended) return Promise.reject(this.#ended);
    if (this.#inFlight.size >= IN_FLIGHT_MAX) return Promise.reject(new Error(`More than ${IN_FLIGHT_MAX} statements wait for the embedded database`));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#inFlight.set(id, { resolve, reject });
      this.worker.postMessage({ kind: 'exchange', id, message, waited: false } satisfies EngineRequest);
    });
  }

  wait(message: Uint8Array): Uint8Array {
    if (this.#ended) throw this.#ended;
    const id = (this.#waitedNumber = (this.#waitedNumber % WAITED_NUMBER_MAX) + 1);
    this.worker.postMessage({ kind: 'exchange', id, message, waited: true } satisfies EngineRequest);
    this.#awaitAnswer(id);
    const header = this.#header;
    const bytes = new Uint8Array(this.answers, ANSWER_HEADER_BYTES, header[2]).slice();
    const outcome = header[1];
    if (outcome === WAITED.answer) return bytes;
    const text = new TextDecoder().decode(bytes);
    if (outcome === WAITED.tooLarge) throw new Error(text);
    const error = new Error(`The embedded database failed: ${text}`);
    this.end(error);
    throw error;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    if (!this.#ended) this.worker.postMessage({ kind: 'stop' } satisfies EngineRequest);
    await this.#exited;
  }

  /** Blocks this thread until the answer to waited exchange `id` is in the shared memory, or gives the engine up. */
  #awaitAnswer(id: number): void {
    const header = this.#header;
    const spinUntil = performance.now() + SPIN_MS;
    while (Atomics.load(header, 0) !== id && performance.now() < spinUntil);
    // Only this exchange's number says its answer is there: the engine thread's wake-up for the answer before may
    // arrive late, after that answer was read (the thread was paused between its write and its wake-up), and
    // would otherwise hand this exchange the answer before as its own.
    const waitUntil = performance.now() + this.answerWaitMs;
    for (let seen = Atomics.load(header, 0); seen !== id; seen = Atomics.load(header, 0)) {
      const left = waitUntil - performance.now();
      if (left <= 0 || Atomics.wait(header, 0, seen, left) === 'timed-out') {
        const error = new Error(`The embedded database did not answer within ${this.answerWaitMs} ms`);
        this.end(error);
        throw error;
      }
    }
  }
}

export async function startPgliteThread(start: EngineStart, limits: { answerWaitMs?: number } = {}): Promise<EngineThread> {
  const answers = new SharedArrayBuffer(ANSWER_HEADER_BYTES + ANSWER_BYTES_INITIAL, { maxByteLength: ANSWER_HEADER_BYTES + ANSWER_BYTES_MAX });
  const client = new ThreadClient(startThread({ ...start, answers }), answers, limits.answerWaitMs ?? ANSWER_WAIT_MS);
  await client.ready();
  return { exchange: { send: (message) => client.send(message), wait: (message) => client.wait(message) }, stop: () => client.stop(), lost: client.lost };
}
