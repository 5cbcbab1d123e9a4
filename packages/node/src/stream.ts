// The key's events as they happen (GET /v1/events/stream, Server-Sent Events), as an async iterable that reconnects
// on its own and resumes after the last event it gave, so that no event is missed and none comes twice.
import { errorOf, retryable, retryWaitMs, sleep, type Transport } from './client.js';
import { TolovConnectionError } from './errors.js';
import type { ErrorBody } from './errors.js';
import type { Event } from './resources.js';

export interface StreamParams {
  /** Only these event types (default: every type Tolov sends). */
  types?: string[];
  /** Start after this event (evt_…) instead of now: every event since is given first. */
  lastEventId?: string;
  /** Ends the stream (the loop over it returns). */
  signal?: AbortSignal;
  /** Called each time the stream is connected: at first, and after each reconnection. */
  onConnect?: () => void;
  /** Called when the connection is lost, with why, before reconnecting. */
  onDisconnect?: (error: Error) => void;
}

/** Failed connection attempts in a row after which the stream gives up (a few minutes of trying). */
const CONNECT_ATTEMPTS_MAX = 30;
/** A frame larger than this is not Tolov's: the connection is dropped and made again. */
const FRAME_MAX = 1_000_000;

/** Server-Sent Events frames from a response body: each frame's fields, in order. */
async function* frames(body: ReadableStream<Uint8Array>): AsyncGenerator<Map<string, string>> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const fields = new Map<string, string>();
      for (const line of buffer.slice(0, end).split('\n')) {
        if (line === '' || line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const name = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        fields.set(name, name === 'data' && fields.has('data') ? `${fields.get('data')}\n${value}` : value);
      }
      buffer = buffer.slice(end + 2);
      yield fields;
    }
    if (buffer.length > FRAME_MAX) throw new Error('an event stream frame exceeded 1 MB');
  }
}

export async function* streamEvents(transport: Transport, params: StreamParams = {}): AsyncGenerator<Event> {
  const { signal } = params;
  const path = `/v1/events/stream${params.types?.length ? `?types=${encodeURIComponent(params.types.join(','))}` : ''}`;
  let lastEventId = params.lastEventId;
  let failures = 0;
  let reconnectMs = 2_000;
  while (!signal?.aborted) {
    let response: Response | null = null;
    try {
      response = await transport.open(path, { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) }, signal);
    } catch (error) {
      if (signal?.aborted) return;
      if (++failures >= CONNECT_ATTEMPTS_MAX) throw new TolovConnectionError(`no event stream from ${transport.baseUrl} after ${failures} attempts: ${(error as Error).message}`, error);
      params.onDisconnect?.(error as Error);
      await sleep(retryWaitMs(null, failures), signal);
      continue;
    }
    if (!response.ok || response.body === null) {
      const text = await response.text();
      const body = (text.startsWith('{') ? JSON.parse(text) : null) as ErrorBody | null;
      if (!retryable(response.status, body) || ++failures >= CONNECT_ATTEMPTS_MAX) throw errorOf(response, body);
      await sleep(retryWaitMs(response, failures), signal);
      continue;
    }
    failures = 0;
    params.onConnect?.();
    try {
      for await (const fields of frames(response.body)) {
        const retry = Number(fields.get('retry'));
        if (Number.isInteger(retry) && retry > 0) reconnectMs = Math.min(retry, 60_000);
        const data = fields.get('data');
        if (data === undefined) continue;
        const event = JSON.parse(data) as Event;
        lastEventId = fields.get('id') ?? event.id;
        yield event;
      }
      params.onDisconnect?.(new Error('the server ended the stream'));
    } catch (error) {
      if (signal?.aborted) return;
      params.onDisconnect?.(error as Error);
    }
    await sleep(reconnectMs, signal);
  }
}
