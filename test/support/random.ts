/** The seed of this run's randomized tests: TOLOV_TEST_SEED replays a failure; otherwise a fresh one, printed. */
export const SEED = Number(process.env.TOLOV_TEST_SEED ?? Date.now() % 2 ** 31);

/** mulberry32: a small seeded generator of numbers in [0, 1), so that a failing sequence can be replayed. */
export function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
