// The Idempotency-Key header of merchant POSTs, and the reply of a command run for a merchant POST.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors.js';
import type { Answer, Invocation } from '../core/commands.js';
import type { PhaseHooks } from '../core/idempotency.js';
import { NO_TIMINGS, type Recorder } from '../lib/timings.js';
import { merchantOf } from './auth.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const KEY_PATTERN = /^[\x20-\x7E]{1,255}$/;

/** Reads and checks the Idempotency-Key header. */
export function idempotencyKeyOf(request: FastifyRequest, required: boolean): string | null {
  const value = request.headers[IDEMPOTENCY_HEADER];
  if (value === undefined) {
    if (required) {
      throw new ApiError('IDEMPOTENCY_KEY_REQUIRED', 'This request needs an Idempotency-Key header (1 to 255 printable ASCII characters)', {
        param: 'Idempotency-Key',
      });
    }
    return null;
  }
  if (typeof value !== 'string' || !KEY_PATTERN.test(value)) {
    throw new ApiError('VALIDATION_ERROR', 'Idempotency-Key must be 1 to 255 printable ASCII characters', {
      param: 'Idempotency-Key',
    });
  }
  return value;
}

/**
 * The API's adapter over the capabilities' commands: a merchant POST becomes an invocation (its API key's product and
 * mode, its Idempotency-Key as the route declares it, its method, path and body) and the command's answer, first or
 * replayed, becomes the reply.
 */
export class IdempotentReplies {
  constructor(
    /** Where each phase's time is recorded, by route and phase. */
    private readonly timings: Recorder = NO_TIMINGS,
    /** Fault injection between atomic phases, for tests. */
    private readonly hooks: PhaseHooks = {},
  ) {}

  /**
   * The hooks of one request: they time its steps (a phase's write, a foreign call and the record of its outcome)
   * under `route`, then run the injected ones.
   */
  private timed(route: string): PhaseHooks {
    const { timings, hooks } = this;
    let point = 'started';
    let step: 'write' | 'record' = 'write';
    let at = performance.now();
    const lap = (name: string) => {
      const now = performance.now();
      timings.record(`${route} · ${name}`, now - at);
      at = now;
    };
    return {
      afterCall: (recoveryPoint) => {
        lap(`${recoveryPoint}: call`);
        step = 'record';
        hooks.afterCall?.(recoveryPoint);
      },
      afterCommit: (recoveryPoint) => {
        lap(`${point}: ${step}`);
        point = recoveryPoint;
        step = 'write';
        hooks.afterCommit?.(recoveryPoint);
      },
    };
  }

  /** Runs `command` for the request and sends its answer through the route's schema for its status. */
  async send<T>(request: FastifyRequest, reply: FastifyReply, command: (invocation: Invocation) => Promise<Answer<T>>): Promise<FastifyReply> {
    const declared = request.routeOptions.config.idempotencyKey;
    if (declared === undefined) throw new Error(`route ${request.routeOptions.url} runs a command but declares no idempotencyKey`);
    const route = `${request.method} ${request.routeOptions.url}`;
    const startedAt = performance.now();
    const answer = await command({
      scope: merchantOf(request),
      key: declared === 'none' ? null : idempotencyKeyOf(request, declared === 'required'),
      request: { id: request.id, method: request.method, path: request.url.split('?')[0]!, body: request.body },
      hooks: this.timed(route),
    });
    this.timings.record(`${route} · all phases`, performance.now() - startedAt);
    if (answer.replayed) reply.header('Idempotent-Replayed', 'true');
    // First answers and replays alike go through the schema: a field it does not declare is never sent.
    return reply.code(answer.status).send(answer.ok ? answer.value : answer.error);
  }
}
