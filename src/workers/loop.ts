import type { FastifyBaseLogger } from 'fastify';

/** One background job: `runOnce` handles one bounded batch and returns how many items it handled. */
export interface Worker {
  name: string;
  intervalMs: number;
  batchMax: number;
  /** Full batches run back to back, this many at most before the interval (10 unless given). */
  roundsMax?: number;
  runOnce(): Promise<number>;
}

export interface RunningWorkers {
  stop(): Promise<void>;
}

// A full batch means more is due: run again at once, but yield to the timer after this many rounds.
const ROUNDS_PER_TICK_MAX = 10;
const ERROR_BACKOFF_MAX_MS = 30_000;

/** Runs each worker in its own loop until `stop`, which waits for the batch in progress to finish. */
export function startWorkers(workers: Worker[], log: FastifyBaseLogger): RunningWorkers {
  let stopping = false;
  const wakeups = new Set<() => void>();
  const sleep = (ms: number) => {
    // A batch that was running when `stop` woke the sleepers ends in this call: no sleep once stopping.
    if (stopping) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        wakeups.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      wakeups.add(done);
    });
  };

  const loop = async (worker: Worker) => {
    let failures = 0;
    while (!stopping) {
      try {
        for (let round = 0; round < (worker.roundsMax ?? ROUNDS_PER_TICK_MAX) && !stopping; round++) {
          if ((await worker.runOnce()) < worker.batchMax) break;
        }
        failures = 0;
        await sleep(worker.intervalMs);
      } catch (error) {
        failures += 1;
        log.error({ err: error, worker: worker.name }, 'worker batch failed');
        await sleep(Math.min(worker.intervalMs * 2 ** failures, ERROR_BACKOFF_MAX_MS));
      }
    }
  };
  const loops = workers.map(loop);
  return {
    async stop() {
      stopping = true;
      for (const wake of [...wakeups]) wake();
      await Promise.all(loops);
    },
  };
}
