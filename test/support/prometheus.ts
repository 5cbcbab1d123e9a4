// Reading GET /metrics as Prometheus would.

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
