// The Idempotency-Key header of merchant POSTs, and the reply of a request run by the idempotency engine.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors.js';
import { runIdempotent, type PhaseHooks, type Step, type Steps } from '../core/idempotency.js';
import type { Db } from '../db/types.js';
import type { Sealer } from '../lib/sealing.js';
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
 * Runs merchant POSTs with or without their Idempotency-Key, as the route's `idempotencyKey` declares, and sends the
 * (possibly replayed) responses.
 */
export class IdempotentReplies {
  constructor(
    private readonly db: Db,
    /** Seals the stored answers that carry a secret. */
    private readonly sealer: Sealer,
    /** Where each phase's time is recorded, by route and phase. */
    private readonly timings: Recorder = NO_TIMINGS,
    /** Fault injection between atomic phases, for tests. */
    private readonly hooks: PhaseHooks = {},
  ) {}

  /**
   * The hooks of one request: they time its steps (a phase's write, a foreign phase's call and the record of its
   * outcome) under `route`, then run the injected ones.
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

  /**
   * `secret`: the answer carries a secret (a webhook signing secret): it is stored sealed, as the secret itself is, so
   * that the table of stored answers does not give it away.
   */
  async send(
    request: FastifyRequest,
    reply: FastifyReply,
    options: { phases: Steps; secret?: boolean },
  ): Promise<FastifyReply> {
    const declared = request.routeOptions.config.idempotencyKey;
    if (declared === undefined) throw new Error(`route ${request.routeOptions.url} runs idempotently but declares no idempotencyKey`);
    const key = idempotencyKeyOf(request, declared === 'required');
    const path = request.url.split('?')[0]!;
    const route = `${request.method} ${request.routeOptions.url}`;
    const startedAt = performance.now();
    const sent = await runIdempotent(
      this.db,
      merchantOf(request),
      key,
      { id: request.id, method: request.method, path, body: request.body },
      options.secret ? this.sealAnswers(options.phases) : options.phases,
      this.timed(route),
    );
    this.timings.record(`${route} · all phases`, performance.now() - startedAt);
    if (sent.replayed) reply.header('Idempotent-Replayed', 'true');
    const body = options.secret && sent.status < 400 ? this.sealer.open((JSON.parse(sent.body) as { sealed: string }).sealed) : sent.body;
    // Sent through the route's schema for its status, first answers and replays alike: a field the schema does not
    // declare is never sent, whatever the stored answer holds.
    return reply.code(sent.status).send(JSON.parse(body));
  }

  /** Atomic phases whose successful answers are `{"sealed": …}`, the answer's JSON sealed. */
  private sealAnswers(steps: Steps): Steps {
    return Object.fromEntries(
      Object.entries(steps).map(([name, step]) => {
        if (typeof step !== 'function') throw new Error(`step ${name}: only atomic phases are sealed`);
        const sealed: Step = async (tx, resourceId) => {
          const result = await step(tx, resourceId);
          if (!('response' in result) || result.response.status >= 400) return result;
          return { ...result, response: { ...result.response, body: { sealed: this.sealer.seal(JSON.stringify(result.response.body)) } } };
        };
        return [name, sealed];
      }),
    );
  }
}
