// A plain Server-Sent Events reader for tests of GET /v1/events/stream, independent of the SDK's.

export interface Frame {
  id: string | undefined;
  event: string | undefined;
  // Tests read arbitrary fields of the event.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
}

export interface OpenedStream {
  response: Response;
  /** The next frame that carries data (events); comments and the retry field are skipped. */
  next(): Promise<Frame>;
  /** Resolves true once the server ends the stream. */
  ended(): Promise<boolean>;
  close(): void;
}

export async function openStream(base: string, key: string, options: { types?: string; lastEventId?: string } = {}): Promise<OpenedStream> {
  const controller = new AbortController();
  const response = await fetch(`${base}/v1/events/stream${options.types === undefined ? '' : `?types=${encodeURIComponent(options.types)}`}`, {
    headers: { authorization: `Bearer ${key}`, ...(options.lastEventId === undefined ? {} : { 'last-event-id': options.lastEventId }) },
    signal: controller.signal,
  });
  if (!response.ok || response.body === null) return { response, next: () => Promise.reject(new Error(`HTTP ${response.status}`)), ended: async () => true, close: () => {} };
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const nextBlock = async (): Promise<string | null> => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        return block;
      }
      const { value, done } = await reader.read();
      if (done) return null;
      buffer += value;
    }
  };
  return {
    response,
    async next() {
      for (;;) {
        const block = await nextBlock();
        if (block === null) throw new Error('the stream ended');
        const fields = new Map(block.split('\n').filter((line) => !line.startsWith(':')).map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]));
        if (fields.has('data')) return { id: fields.get('id'), event: fields.get('event'), data: JSON.parse(fields.get('data')!) };
      }
    },
    async ended() {
      try {
        while ((await nextBlock()) !== null);
        return true;
      } catch {
        return true;
      }
    },
    close: () => controller.abort(),
  };
}
