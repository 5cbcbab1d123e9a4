import { describe, expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';
import { randomBase62 } from '../../src/lib/random.js';

describe('ids', () => {
  it('are the prefix, 8 characters of time and 16 random ones, and sort in the order they were made', async () => {
    const first = newId('pi');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = newId('pi');
    for (const id of [first, second]) expect(id).toMatch(/^pi_[0-9A-Za-z]{24}$/);
    expect([second, first].sort()).toEqual([first, second]);
  });

  it('never repeat, across many refills of the random pool', () => {
    const ids = Array.from({ length: 20_000 }, () => newId('evt'));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('draw every base62 character equally often (chi-square, 61 degrees of freedom)', () => {
    const text = randomBase62(124_000);
    expect(text).toMatch(/^[0-9A-Za-z]+$/);
    const counts = new Map<string, number>();
    for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = text.length / 62;
    const chiSquare = [...counts.values()].reduce((sum, count) => sum + (count - expected) ** 2 / expected, 0);
    // Mean 61, standard deviation 11: above 150 happens by chance about once in a billion runs; taking every byte
    // modulo 62 (no rejection) would give about 800.
    expect(chiSquare).toBeLessThan(150);
  });
});
