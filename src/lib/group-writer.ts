// Group writing: the items submitted while a write is in flight are written together by the next one, in one
// statement and one commit, as PostgreSQL groups the commits that wait for one WAL flush. An idle writer starts at
// once, so a lone item waits for nothing; under load a batch holds what arrived during the previous write.
import type { Recorder } from './timings.js';

export interface GroupWriterLimits {
  /** Items in one write. */
  batchMax: number;
  /** Items waiting for a write; past it `submit` refuses at once. */
  waitingMax: number;
}

/** Where a group writer reports its time: each item's wait for its group's write, and each write. */
export interface GroupTiming {
  recorder: Recorder;
  name: string;
}

interface Waiting<Item, Result> {
  item: Item;
  submittedAt: number;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Returns `submit(item)`, which resolves with the item's result once `write` has stored it. `write` gets up to
 * `batchMax` items and answers one result per item, in order. One group write runs at a time. When a write of several
 * items throws, whatever the cause, each of them is written again alone, all at once and beside the next group, which
 * does not wait for them: a failing item costs each member of its group one more write, and is rejected with the error
 * of its own write. Items waiting or written again alone count against `waitingMax`.
 */
export function groupWriter<Item, Result>(
  write: (items: Item[]) => Promise<Result[]>,
  limits: GroupWriterLimits,
  timing: GroupTiming | null = null,
): (item: Item) => Promise<Result> {
  const waiting: Waiting<Item, Result>[] = [];
  const waitName = `${timing?.name}: waiting for the group before`;
  const writeName = `${timing?.name}: group write (execute and commit)`;
  let writing = false;
  let alone = 0;

  const writeAll = async (batch: Waiting<Item, Result>[]): Promise<void> => {
    const results = await write(batch.map((entry) => entry.item));
    if (results.length !== batch.length) throw new Error(`group write answered ${results.length} results for ${batch.length} items`);
    batch.forEach((entry, index) => entry.resolve(results[index]!));
  };

  const writeAlone = async (entry: Waiting<Item, Result>): Promise<void> => {
    alone += 1;
    try {
      await writeAll([entry]);
    } catch (error) {
      entry.reject(error);
    } finally {
      alone -= 1;
    }
  };

  const drain = async (): Promise<void> => {
    writing = true;
    while (waiting.length > 0) {
      const batch = waiting.splice(0, limits.batchMax);
      const startedAt = performance.now();
      if (timing) for (const entry of batch) timing.recorder.record(waitName, startedAt - entry.submittedAt);
      try {
        await writeAll(batch);
        // Once per item, as each of them waited for it: a mean per item, which weighs a big group as its items do.
        timing?.recorder.record(writeName, performance.now() - startedAt, batch.length);
      } catch (error) {
        if (batch.length === 1) batch[0]!.reject(error);
        else for (const entry of batch) void writeAlone(entry);
      }
    }
    writing = false;
  };

  return (item) => {
    if (waiting.length + alone >= limits.waitingMax) {
      return Promise.reject(new Error(`group write: ${waiting.length + alone} items already waiting`));
    }
    return new Promise<Result>((resolve, reject) => {
      waiting.push({ item, submittedAt: performance.now(), resolve, reject });
      if (!writing) void drain();
    });
  };
}
