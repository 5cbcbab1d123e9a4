// Reading GET /metrics as Prometheus would.
import type { Traffic } from '../../src/db/types.js';
import type { TestService } from './harness.js';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition: each line `name{labels} value`, every value a number. */
export function samples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((label) => [label[1]!, label[2]!]));
      const value = Number(match[3]);
      // prom-client writes NaN as `Nan` (an event loop sampled no delay since the last scrape); Prometheus reads either.
      if (Number.isNaN(value) && !/^nan$/i.test(match[3]!)) throw new Error(`not a number: ${line}`);
      return { name: match[1]!, labels, value };
    });
}

/**
 * The service's database round trips and statements, from its /metrics (with `token`). A scrape reads them before it
 * sends its own statement (the queues' depths), so that statement is counted by the next scrape.
 */
export async function databaseTraffic(service: Pick<TestService, 'call'>, token: string): Promise<Traffic> {
  const reply = await service.call({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
  if (reply.status !== 200) throw new Error(`/metrics answered ${reply.status}`);
  const value = (name: string) => samples(reply.text).find((sample) => sample.name === name)!.value;
  return { roundTrips: value('tolov_db_round_trips_total'), statements: value('tolov_db_statements_total') };
}
