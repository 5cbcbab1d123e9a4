// SIGTERM to the built service under a steady charge load from keep-alive clients: what became of the requests in
// flight at the signal and of those sent after it, and how long the process took to exit.
import type { ChildProcess } from 'node:child_process';
import { Client } from 'undici';

export interface GracefulStop {
  /** Charges answered per second before the signal. */
  chargesPerSecond: number;
  /** Requests sent and not yet answered when the signal was sent, and how many of those were answered 201. */
  inFlight: number;
  inFlightCreated: number;
  /** When the last of them was answered, after the signal. */
  inFlightDoneMs: number;
  /** Requests sent after the signal: answered 201, answered 503, refused (the listener was closed). */
  createdAfter: number;
  unavailableAfter: number;
  refused: number;
  /** Requests whose connection failed otherwise (a reset): none, if the stop is graceful. */
  failed: string[];
  stopMs: number;
  exitCode: number | null;
}

interface Load {
  url: string;
  child: ChildProcess;
  authorization: string;
  body: Record<string, unknown>;
  connections: number;
  /** How long the load runs before the signal. */
  loadMs: number;
}

interface Sent {
  sentAt: number;
  answeredAt?: number;
  status?: number;
  error?: string;
}

/** One client on one keep-alive connection, charging back to back until a request fails (the process is gone). */
async function chargeUntilGone(load: Load, client: number, sent: Sent[]): Promise<void> {
  const http = new Client(load.url);
  try {
    for (let n = 0; ; n++) {
      const request: Sent = { sentAt: Date.now() };
      sent.push(request);
      try {
        const reply = await http.request({
          method: 'POST',
          path: '/subscribe/v1/charges',
          headers: { authorization: load.authorization, 'content-type': 'application/json', 'idempotency-key': `stop-${client}-${n}` },
          body: JSON.stringify(load.body),
        });
        await reply.body.dump();
        request.answeredAt = Date.now();
        request.status = reply.statusCode;
      } catch (error) {
        request.error = (error as { code?: string }).code ?? String(error);
        return;
      }
    }
  } finally {
    await http.destroy();
  }
}

/** Loads the service for `loadMs`, sends SIGTERM, and waits for the process to exit and every client to stop. */
export async function measureGracefulStop(load: Load): Promise<GracefulStop> {
  const sent: Sent[] = [];
  const exited = new Promise<number | null>((resolve) => load.child.once('exit', (code) => resolve(code)));
  const clients = Promise.all(Array.from({ length: load.connections }, (_, client) => chargeUntilGone(load, client, sent)));
  const startedAt = Date.now();
  await new Promise((resolve) => setTimeout(resolve, load.loadMs));
  const signalAt = Date.now();
  const before = sent.filter((request) => request.status === 201).length;
  const inFlight = sent.filter((request) => request.status === undefined && request.error === undefined);
  load.child.kill('SIGTERM');
  const exitCode = await exited;
  const stopMs = Date.now() - signalAt;
  await clients;
  const after = sent.filter((request) => request.sentAt > signalAt);
  return {
    chargesPerSecond: Math.round((before * 1000) / (signalAt - startedAt)),
    inFlight: inFlight.length,
    inFlightCreated: inFlight.filter((request) => request.status === 201).length,
    inFlightDoneMs: Math.max(0, ...inFlight.map((request) => (request.answeredAt ?? signalAt) - signalAt)),
    createdAfter: after.filter((request) => request.status === 201).length,
    unavailableAfter: after.filter((request) => request.status === 503).length,
    refused: sent.filter((request) => request.error === 'ECONNREFUSED').length,
    failed: sent.filter((request) => (request.error !== undefined && request.error !== 'ECONNREFUSED') || (request.status !== undefined && request.status !== 201 && request.status !== 503)).map((request) => request.error ?? String(request.status)),
    stopMs,
    exitCode,
  };
}

export function gracefulStopLine(engine: string, connections: number, stop: GracefulStop): string {
  return (
    `${engine}: SIGTERM at ${stop.chargesPerSecond} charges/s from ${connections} keep-alive clients: ${stop.inFlightCreated} of ${stop.inFlight} in flight answered 201, the last ${stop.inFlightDoneMs} ms after it; ` +
    `after the signal ${stop.createdAfter} more answered 201, ${stop.unavailableAfter} answered 503, ${stop.refused} refused (listener closed), ` +
    `${stop.failed.length} reset${stop.failed.length > 0 ? ` (${[...new Set(stop.failed)].join(', ')})` : ''}; exit ${stop.exitCode} after ${stop.stopMs} ms`
  );
}
