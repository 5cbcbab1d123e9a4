// Both sides of a day's money, read as streams ordered by operation id in byte order, a page at a time: a report of any
// size holds only a page of each side in memory, and the two sides meet by id whatever their own dating.

/** Rows a side is read in at a time. */
const PAGE_SIZE = 1_000;

/** Every row of a paged source, in its order: `page(after)` gives the rows after the id `after` (all from null). */
export async function* paged<T>(page: (after: string | null, limit: number) => Promise<T[]>, idOf: (row: T) => string): AsyncGenerator<T> {
  let after: string | null = null;
  for (;;) {
    const rows = await page(after, PAGE_SIZE);
    yield* rows;
    if (rows.length < PAGE_SIZE) return;
    after = idOf(rows.at(-1)!);
  }
}

/** Several streams ordered by id, as one ordered by id (ids are ASCII: JavaScript's order is byte order). */
export async function* mergedById<T>(streams: AsyncGenerator<T>[], idOf: (row: T) => string): AsyncGenerator<T> {
  const heads = await Promise.all(streams.map((stream) => stream.next()));
  for (;;) {
    let next = -1;
    for (let index = 0; index < heads.length; index++) {
      const head = heads[index]!;
      if (head.done) continue;
      if (next === -1 || idOf(head.value) < idOf((heads[next] as IteratorYieldResult<T>).value)) next = index;
    }
    if (next === -1) return;
    yield (heads[next] as IteratorYieldResult<T>).value;
    heads[next] = await streams[next]!.next();
  }
}

/** Pairs of two id-ordered streams matched by id: each id once, with its row on each side or null. */
export async function* joinedById<A, B>(
  left: AsyncGenerator<A>,
  right: AsyncGenerator<B>,
  leftId: (row: A) => string,
  rightId: (row: B) => string,
): AsyncGenerator<[A | null, B | null]> {
  let a = await left.next();
  let b = await right.next();
  while (!a.done || !b.done) {
    if (!a.done && (b.done || leftId(a.value) < rightId(b.value))) {
      yield [a.value, null];
      a = await left.next();
    } else if (!b.done && (a.done || rightId(b.value) < leftId(a.value))) {
      yield [null, b.value];
      b = await right.next();
    } else {
      yield [(a as IteratorYieldResult<A>).value, (b as IteratorYieldResult<B>).value];
      a = await left.next();
      b = await right.next();
    }
  }
}
