import { describe, expect, it } from 'vitest';
import { startWorkers } from '../../src/workers/loop.js';

const silent = { error: () => {} } as unknown as Parameters<typeof startWorkers>[1];

describe('background worker loops', () => {
  it('stop once the batch in progress ends, without sleeping the interval after it', async () => {
    let finishBatch: (handled: number) => void = () => {};
    let started: () => void = () => {};
    const batchStarted = new Promise<void>((resolve) => (started = resolve));
    const workers = startWorkers(
      [
        {
          name: 'slow batch',
          intervalMs: 60_000,
          batchMax: 10,
          runOnce: () => {
            started();
            return new Promise<number>((resolve) => (finishBatch = resolve));
          },
        },
      ],
      silent,
    );
    await batchStarted;
    const stopped = workers.stop();
    let done = false;
    void stopped.then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The batch in progress is waited for...
    expect(done).toBe(false);
    finishBatch(0);
    // ...and nothing after it: the loop does not sleep its 60 s interval first.
    const within = await Promise.race([stopped.then(() => 'stopped'), new Promise((resolve) => setTimeout(() => resolve('still sleeping'), 1_000))]);
    expect(within).toBe('stopped');
  });

  it('run full batches back to back, ten at most unless a worker says fewer, then wait the interval', async () => {
    const batches = { eager: 0, paced: 0 };
    const full = (name: keyof typeof batches) => async () => {
      batches[name] += 1;
      return 1;
    };
    const workers = startWorkers(
      [
        { name: 'eager', intervalMs: 60_000, batchMax: 1, runOnce: full('eager') },
        { name: 'paced', intervalMs: 60_000, batchMax: 1, roundsMax: 1, runOnce: full('paced') },
      ],
      silent,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await workers.stop();
    expect(batches).toEqual({ eager: 10, paced: 1 });
  });
});
