// `tolov logs tail`: the product's API calls in the key's mode as they are made, from the request log.
import Tolov, { TolovError, type RequestLogEntry } from '@tolov/node';

/** How often the log is read. */
const POLL_MS = 1_000;
const PAGE_MAX = 100;

const line = (entry: RequestLogEntry) =>
  `${entry.created.replace('T', ' ').slice(0, 19)}  ${entry.method.padEnd(6)} ${entry.path}  ${entry.status}  ${entry.durationMs} ms  ${entry.id}` +
  (entry.idempotencyKey === null ? '' : `  idempotency-key: ${entry.idempotencyKey}`);

const wait = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * The calls after `last`; without one, the latest (10 at the start, to show where things stand); when `last` has left
 * the log (1,000 calls later), the latest page, and a gap.
 */
async function callsAfter(tolov: Tolov, last: string | undefined, started: boolean): Promise<{ entries: RequestLogEntry[]; gap: boolean }> {
  if (last !== undefined) {
    try {
      return { entries: (await tolov.requestLogs.list({ ending_before: last, limit: PAGE_MAX })).data, gap: false };
    } catch (error) {
      if (!(error instanceof TolovError && error.param === 'ending_before')) throw error;
    }
  }
  return { entries: (await tolov.requestLogs.list({ limit: started ? PAGE_MAX : 10 })).data, gap: last !== undefined };
}

export async function tailLogs(tolov: Tolov, options: { json: boolean; signal: AbortSignal }): Promise<void> {
  const print = (entry: RequestLogEntry) => process.stdout.write(`${options.json ? JSON.stringify(entry) : line(entry)}\n`);
  let last: string | undefined;
  for (let started = false; !options.signal.aborted; started = true) {
    const { entries, gap } = await callsAfter(tolov, last, started);
    if (gap) process.stdout.write(options.json ? `${JSON.stringify({ gap: true })}\n` : '… more calls than a read shows were made meanwhile\n');
    // Pages come newest first; a tail prints oldest first.
    for (const entry of [...entries].reverse()) print(entry);
    last = entries[0]?.id ?? last;
    await wait(POLL_MS, options.signal);
  }
}
