// `tolov listen`: the key's events, live, forwarded to a local URL and signed as Tolov signs a delivery, with a secret
// that stays the same for the key, so that a receiver's configuration survives restarts.
import { createHmac } from 'node:crypto';
import Tolov, { signedHeaders, type Event } from '@tolov/node';

/** A forward that has no answer within this long is reported as failed; the next event is forwarded regardless. */
const FORWARD_TIMEOUT_MS = 10_000;

/** The signing secret of `tolov listen` for this API key: derived from it, so the same every time. */
export function listenSecret(apiKey: string): string {
  return `whsec_${createHmac('sha256', apiKey).update('tolov listen').digest('base64')}`;
}

export interface ListenOptions {
  forwardTo: string;
  types?: string[];
  json: boolean;
  signal: AbortSignal;
}

const now = () => new Date().toISOString().replace('T', ' ').slice(0, 19);

/** Posts one event as a delivery would: the exact bytes signed, with the answer's status or the failure. */
async function forward(event: Event, url: string, secret: string): Promise<{ status: number | null; error?: string; ms: number }> {
  const body = JSON.stringify(event);
  const started = Date.now();
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...signedHeaders(body, secret, { eventId: event.id, eventType: event.type }), 'user-agent': 'tolov-cli/0.1.0 (listen)' },
      body,
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    await response.arrayBuffer();
    return { status: response.status, ms: Date.now() - started };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    return { status: null, error: cause, ms: Date.now() - started };
  }
}

export async function listen(tolov: Tolov, apiKey: string, options: ListenOptions): Promise<void> {
  const secret = listenSecret(apiKey);
  const say = (text: string, json: Record<string, unknown>) => process.stdout.write(`${options.json ? JSON.stringify(json) : text}\n`);
  const mode = apiKey.startsWith('sk_live_') ? 'live' : 'test';
  let connectedOnce = false;
  const stream = tolov.events.stream({
    ...(options.types ? { types: options.types } : {}),
    signal: options.signal,
    onConnect: () => {
      if (connectedOnce) say(`${now()}  reconnected, resuming after the last event seen`, { connected: true, resumed: true });
      else say(`Ready! Forwarding ${mode} events to ${options.forwardTo}. Your webhook signing secret is ${secret} (Ctrl-C to quit)`, { connected: true, secret });
      connectedOnce = true;
    },
    onDisconnect: (error) => say(`${now()}  connection lost (${error.message}); reconnecting`, { connected: false, error: error.message }),
  });
  for await (const event of stream) {
    say(`${now()}  --> ${event.type} [${event.id}]`, { event: event.id, type: event.type });
    const result = await forward(event, options.forwardTo, secret);
    const outcome = result.status === null ? `failed: ${result.error}` : `[${result.status}]`;
    say(`${now()}  <-- ${outcome} POST ${options.forwardTo} [${event.id}] ${result.ms} ms`, { event: event.id, forwarded: result.status, error: result.error ?? null, ms: result.ms });
  }
}
