import { describe, expect, it } from 'vitest';
import { groupWriter } from '../../src/lib/group-writer.js';

/** A write that records each batch it got and answers when `release` is called. */
function gatedWrite() {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  const write = (items: number[]) =>
    new Promise<string[]>((resolve) => {
      batches.push(items);
      gates.push(() => resolve(items.map((item) => `stored ${item}`)));
    });
  const release = async () => {
    gates.shift()!();
    // Let the writer take its next batch.
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { batches, write, release };
}

describe('group writer', () => {
  it('writes a lone item at once, and what arrived meanwhile in one write, each answered with its own result', async () => {
    const { batches, write, release } = gatedWrite();
    const submit = groupWriter(write, { batchMax: 10, waitingMax: 100 });
    const first = submit(1);
    expect(batches).toEqual([[1]]);
    const others = [2, 3, 4].map(submit);
    expect(batches).toHaveLength(1);
    await release();
    expect(await first).toBe('stored 1');
    expect(batches).toEqual([[1], [2, 3, 4]]);
    await release();
    expect(await Promise.all(others)).toEqual(['stored 2', 'stored 3', 'stored 4']);
  });

  it('writes at most batchMax items at a time, in the order they came', async () => {
    const { batches, write, release } = gatedWrite();
    const submit = groupWriter(write, { batchMax: 2, waitingMax: 100 });
    const all = [1, 2, 3, 4, 5].map(submit);
    for (let i = 0; i < 3; i++) await release();
    expect(await Promise.all(all)).toEqual([1, 2, 3, 4, 5].map((n) => `stored ${n}`));
    expect(batches).toEqual([[1], [2, 3], [4, 5]]);
  });

  it('rejects a lone item whose write failed, and writes the next', async () => {
    let calls = 0;
    const submit = groupWriter(
      async (items: number[]) => {
        calls += 1;
        if (calls === 1) throw new Error('connection lost');
        return items.map(String);
      },
      { batchMax: 10, waitingMax: 100 },
    );
    await expect(submit(1)).rejects.toThrow('connection lost');
    expect(await submit(2)).toBe('2');
  });

  it('writes the items of a failed group again alone, so that only the item that fails is rejected', async () => {
    const batches: number[][] = [];
    const submit = groupWriter(
      async (items: number[]) => {
        batches.push(items);
        if (items.includes(3)) throw new Error('3 breaks a constraint');
        return items.map(String);
      },
      { batchMax: 10, waitingMax: 100 },
    );
    const outcomes = await Promise.allSettled([1, 2, 3, 4].map(submit));
    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : String(outcome.reason)))).toEqual([
      '1',
      '2',
      'Error: 3 breaks a constraint',
      '4',
    ]);
    expect(batches).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
  });

  it('writes a failed group\'s items alone all at once, beside the next group, which waits for none of them', async () => {
    const started: number[][] = [];
    const gates = new Map<string, () => void>();
    const submit = groupWriter(
      (items: number[]) => {
        started.push(items);
        if (items.length > 1 && items.includes(3)) return Promise.reject(new Error('3 breaks the group'));
        // Every other write waits until the test lets it answer.
        return new Promise<string[]>((resolve) => gates.set(items.join(','), () => resolve(items.map(String))));
      },
      { batchMax: 10, waitingMax: 100 },
    );
    const first = submit(1);
    const poisoned = [2, 3, 4].map(submit);
    gates.get('1')!();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    // The group [2, 3, 4] failed; its three items are each being written alone, none waiting for another.
    expect(started).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
    const next = submit(5);
    expect(started.at(-1)).toEqual([5]);
    gates.get('5')!();
    expect(await next).toBe('5');
    for (const item of ['2', '3', '4']) gates.get(item)!();
    expect(await Promise.all(poisoned)).toEqual(['2', '3', '4']);
  });

  it('counts items written again alone against waitingMax', async () => {
    const gates: (() => void)[] = [];
    const submit = groupWriter(
      (items: number[]) =>
        items.length > 1 ? Promise.reject(new Error('poisoned')) : new Promise<string[]>((resolve) => gates.push(() => resolve(items.map(String)))),
      { batchMax: 10, waitingMax: 2 },
    );
    const accepted = [submit(1), submit(2), submit(3)];
    gates.shift()!();
    await accepted[0];
    await new Promise((resolve) => setImmediate(resolve));
    // 2 and 3 failed as a group and are being written alone: the writer is full until they are done.
    await expect(submit(4)).rejects.toThrow('2 items already waiting');
    while (gates.length > 0) gates.shift()!();
    expect(await Promise.all(accepted)).toEqual(['1', '2', '3']);
    const later = submit(4);
    gates.shift()!();
    expect(await later).toBe('4');
  });

  it('rejects a write that answers a different number of results than it got items', async () => {
    const submit = groupWriter(async (items: number[]) => items.slice(1).map(String), { batchMax: 10, waitingMax: 100 });
    await expect(submit(1)).rejects.toThrow('answered 0 results for 1 items');
  });

  it('refuses an item once waitingMax items wait, and takes items again after the queue drains', async () => {
    const { write, release } = gatedWrite();
    const submit = groupWriter(write, { batchMax: 10, waitingMax: 2 });
    const accepted = [submit(1), submit(2), submit(3)];
    await expect(submit(4)).rejects.toThrow('2 items already waiting');
    await release();
    await release();
    expect(await Promise.all(accepted)).toEqual(['stored 1', 'stored 2', 'stored 3']);
    const later = submit(5);
    await release();
    expect(await later).toBe('stored 5');
  });
});
