// GET /v1/events/stream: the key's events as Server-Sent Events, live, resumable with Last-Event-ID.
import { once } from 'node:events';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { SENT_EVENT_TYPES } from '../../modules/webhooks/events.js';
import type { Event } from '../../modules/webhooks/schema.js';
import type { EventStreams } from '../../modules/webhooks/stream.js';
import { merchantOf } from '../auth.js';

/** A comment line this often keeps proxies from closing a quiet stream, and finds readers that went away. */
const HEARTBEAT_MS = 15_000;
/**
 * An open stream's connection is closed after this long with nothing read or written: two heartbeats, so only one whose
 * writes stopped reaching the socket (a reader that stopped reading). It replaces the server's idle timeout, which is
 * for connections between requests and is shorter than the heartbeat.
 */
const STREAM_IDLE_MS = 2 * HEARTBEAT_MS;
/** A reader that takes longer than this to accept what was written is let go; its stream resumes when it returns. */
const DRAIN_WAIT_MS = 30_000;
/** How long a client waits before reconnecting (the SSE `retry` field). */
const RECONNECT_MS = 2_000;

const StreamQuery = Type.Object(
  {
    types: Type.Optional(
      Type.String({ maxLength: 512, description: `Comma-separated event types to receive (default: all): ${SENT_EVENT_TYPES.join(', ')}` }),
    ),
  },
  { additionalProperties: false },
);
type StreamQuery = Static<typeof StreamQuery>;
const StreamHeaders = Type.Object({
  'last-event-id': Type.Optional(Type.String({ maxLength: 64, description: 'Resume after this event (evt_…): every event since is sent, none missed' })),
});
type StreamHeaders = Static<typeof StreamHeaders>;

function typesOf(query: StreamQuery): string[] | undefined {
  if (query.types === undefined) return undefined;
  const types = query.types.split(',').map((type) => type.trim());
  const unknown = types.find((type) => !(SENT_EVENT_TYPES as readonly string[]).includes(type));
  if (unknown !== undefined) {
    throw new ApiError('VALIDATION_ERROR', `types has ${JSON.stringify(unknown)}; the types sent are ${SENT_EVENT_TYPES.join(', ')}`, { param: 'types' });
  }
  return types;
}

/** Writes `text`, waiting (a bounded time) until the reader has taken what was written before if it is behind. */
async function write(raw: ServerResponse, text: string): Promise<void> {
  if (raw.write(text)) return;
  const drained = await Promise.race([
    once(raw, 'drain').then(() => true),
    once(raw, 'close').then(() => false),
    new Promise<boolean>((resolve) => setTimeout(resolve, DRAIN_WAIT_MS, false).unref()),
  ]);
  if (!drained) throw new Error('the reader did not keep up');
}

const frame = (event: Event) => `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

export const eventStreamRoutes: FastifyPluginAsync<{ streams: EventStreams }> = async (app, { streams }) => {
  app.get<{ Querystring: StreamQuery; Headers: StreamHeaders }>(
    '/v1/events/stream',
    {
      config: { auth: { kind: 'merchant' } },
      schema: {
        tags: ['events'],
        operationId: 'streamEvents',
        summary: "The key's events as they happen (Server-Sent Events); with Last-Event-ID, every event since that one first",
        querystring: StreamQuery,
        headers: StreamHeaders,
        response: {
          200: {
            description: 'A text/event-stream: per event, `id` (the event id), `event` (its type) and `data` (the Event as JSON)',
            content: { 'text/event-stream': { schema: Type.String() } },
          },
        },
      },
    },
    async (request, reply) => {
      const types = typesOf(request.query);
      const after = request.headers['last-event-id'];
      const raw = reply.raw;
      const stream = await streams.open(merchantOf(request), { ...(types ? { types } : {}), ...(after ? { after } : {}) }, (events) =>
        write(raw, events.map(frame).join('')),
      );
      reply.hijack();
      request.raw.socket.setTimeout(STREAM_IDLE_MS);
      raw.writeHead(200, {
        ...(reply.getHeaders() as OutgoingHttpHeaders),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
      });
      raw.write(`retry: ${RECONNECT_MS}\n: streaming events\n\n`);
      const heartbeat = setInterval(() => void write(raw, ': keep-alive\n\n').catch(() => stream.close()), HEARTBEAT_MS);
      raw.on('close', () => stream.close());
      stream.start();
      await stream.ended;
      clearInterval(heartbeat);
      raw.end();
    },
  );
};
