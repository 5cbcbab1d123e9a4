import type { Queryable, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import type { Listed } from '../../core/pagination.js';

const ENDPOINT_COLUMNS = 'id, product_id, livemode, url, enabled_events, description, status, created_at';
/** What a merchant's list of them reads. */
export const ENDPOINT_LIST: Listed = { table: 'webhook_endpoints', columns: ENDPOINT_COLUMNS };

export interface EndpointRow {
  id: string;
  product_id: string;
  livemode: boolean;
  url: string;
  enabled_events: string[];
  description: string | null;
  status: 'enabled' | 'disabled' | 'deleted';
  created_at: Date;
}

export async function insertEndpoint(
  tx: Transaction,
  merchant: Merchant,
  endpoint: { id: string; url: string; enabledEvents: string[]; description: string | null; secretSealed: string },
): Promise<EndpointRow> {
  const [row] = await tx.query<EndpointRow>(
    `INSERT INTO webhook_endpoints (id, product_id, livemode, url, enabled_events, description, status, secret_sealed)
     VALUES ($1, $2, $3, $4, $5, $6, 'enabled', $7) RETURNING ${ENDPOINT_COLUMNS}`,
    [endpoint.id, merchant.productId, merchant.livemode, endpoint.url, endpoint.enabledEvents, endpoint.description, endpoint.secretSealed],
  );
  return row!;
}

/**
 * Locks the product's endpoints of one mode against concurrent creation (its product row, the one row they share)
 * and counts those not deleted: two creations at the limit cannot both pass it.
 */
export async function lockAndCountEndpoints(tx: Transaction, merchant: Merchant): Promise<number> {
  await tx.query('SELECT 1 FROM products WHERE id = $1 FOR UPDATE', [merchant.productId]);
  const [row] = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_endpoints WHERE product_id = $1 AND livemode = $2 AND status <> 'deleted'`,
    [merchant.productId, merchant.livemode],
  );
  return row!.n;
}

/** Deliveries of one event to one endpoint so far, the first included. */
export async function deliveriesOfEvent(tx: Transaction, eventId: string, endpointId: string): Promise<number> {
  const [row] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2', [
    eventId,
    endpointId,
  ]);
  return row!.n;
}

export async function findEndpoint(db: Queryable, merchant: Merchant, id: string): Promise<EndpointRow | undefined> {
  const [row] = await db.query<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND product_id = $2 AND livemode = $3 AND status <> 'deleted'`,
    [id, merchant.productId, merchant.livemode],
  );
  return row;
}

export async function updateEndpoint(
  db: Queryable,
  merchant: Merchant,
  id: string,
  change: { url?: string; enabledEvents?: string[]; description?: string; status?: 'enabled' | 'disabled' },
): Promise<EndpointRow | undefined> {
  const [row] = await db.query<EndpointRow>(
    `UPDATE webhook_endpoints
        SET url = coalesce($4, url), enabled_events = coalesce($5, enabled_events),
            description = coalesce($6, description), status = coalesce($7, status)
      WHERE id = $1 AND product_id = $2 AND livemode = $3 AND status <> 'deleted'
      RETURNING ${ENDPOINT_COLUMNS}`,
    [id, merchant.productId, merchant.livemode, change.url ?? null, change.enabledEvents ?? null, change.description ?? null, change.status ?? null],
  );
  return row;
}

/** Deleted endpoints keep their row (deliveries refer to it) but are invisible and receive nothing more. */
export async function deleteEndpoint(db: Queryable, merchant: Merchant, id: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE webhook_endpoints SET status = 'deleted' WHERE id = $1 AND product_id = $2 AND livemode = $3 AND status <> 'deleted' RETURNING id`,
    [id, merchant.productId, merchant.livemode],
  );
  return rows.length === 1;
}

/** A new (sealed) secret; the current one keeps signing alongside it until the overlap ends. */
export async function rollSecret(db: Queryable, merchant: Merchant, id: string, secretSealed: string, overlapSeconds: number) {
  const [row] = await db.query<EndpointRow>(
    `UPDATE webhook_endpoints
        SET previous_secret_sealed = secret_sealed, previous_secret_until = now() + $5 * interval '1 second', secret_sealed = $4
      WHERE id = $1 AND product_id = $2 AND livemode = $3 AND status <> 'deleted'
      RETURNING ${ENDPOINT_COLUMNS}`,
    [id, merchant.productId, merchant.livemode, secretSealed, overlapSeconds],
  );
  return row;
}

/** The sealed secret an endpoint signs with now. */
export async function endpointSecret(db: Queryable, merchant: Merchant, id: string): Promise<string | undefined> {
  const [row] = await db.query<{ secret_sealed: string }>(
    `SELECT secret_sealed FROM webhook_endpoints WHERE id = $1 AND product_id = $2 AND livemode = $3 AND status <> 'deleted'`,
    [id, merchant.productId, merchant.livemode],
  );
  return row?.secret_sealed;
}

export interface StoredSecrets {
  id: string;
  secret: string | null;
  previous_secret: string | null;
  secret_sealed: string | null;
  previous_secret_sealed: string | null;
}

/** Endpoints whose secrets are still in plain text, or sealed under a key other than `currentKeyId`: a batch. */
export async function secretsToSeal(db: Queryable, currentKeyId: string, batchMax: number): Promise<StoredSecrets[]> {
  const current = `v1.${currentKeyId}.%`;
  return db.query<StoredSecrets>(
    `SELECT id, secret, previous_secret, secret_sealed, previous_secret_sealed FROM webhook_endpoints
      WHERE secret IS NOT NULL OR previous_secret IS NOT NULL
         OR secret_sealed NOT LIKE $1 OR previous_secret_sealed NOT LIKE $1
      ORDER BY seq LIMIT $2`,
    [current, batchMax],
  );
}

/** Stores an endpoint's secrets sealed, and its plain ones no more. */
export async function storeSealedSecrets(db: Queryable, id: string, sealed: { secret: string; previous: string | null }): Promise<void> {
  await db.query(
    `UPDATE webhook_endpoints SET secret_sealed = $2, previous_secret_sealed = $3, secret = NULL, previous_secret = NULL WHERE id = $1`,
    [id, sealed.secret, sealed.previous],
  );
}

export interface DueDelivery {
  id: string;
  attempts: number;
  endpoint_id: string;
  product_id: string;
  url: string;
  endpoint_status: EndpointRow['status'];
  /** Sealed: the current secret, and the previous one during a roll's overlap. */
  secrets: string[];
  event_id: string;
  type: string;
  livemode: boolean;
  created_at: Date;
  data: unknown;
}

/** What the delivery log says of an attempt whose worker stopped (a crash) before recording it. */
export const INTERRUPTED_ATTEMPT = 'interrupted: the sending process stopped during this attempt; it may have reached the endpoint';

/**
 * The oldest due deliveries, at most perEndpointMax (or the endpoint's room) per endpoint and perProductMax (or the
 * product's room) per product, those of endpoints and products without room not even read; then locked, skipping
 * any another worker holds, their conditions checked again under the lock.
 */
const LEASE_DUE = `WITH room AS (SELECT * FROM unnest($6::text[], $7::integer[]) AS r (endpoint_id, room)),
     product_room AS (SELECT * FROM unnest($9::text[], $10::integer[]) AS p (product_id, room)),
     candidates AS (
       SELECT d.id, d.endpoint_id, w.product_id, d.next_attempt_at
         FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
        WHERE d.status = 'pending' AND (d.locked_until IS NULL OR d.locked_until <= now())
          AND ((d.attempts > 0 AND d.next_attempt_at <= now())
            OR (d.attempts = 0 AND d.next_attempt_at <= now() - $3 * interval '1 second'))
          AND d.endpoint_id NOT IN (SELECT endpoint_id FROM room WHERE room = 0)
          AND w.product_id NOT IN (SELECT product_id FROM product_room WHERE room = 0)
        ORDER BY d.next_attempt_at LIMIT $1 * 4),
     ranked AS (
       SELECT c.id, c.next_attempt_at,
              row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at) AS rank, coalesce(r.room, $8) AS room,
              row_number() OVER (PARTITION BY c.product_id ORDER BY c.next_attempt_at) AS product_rank, coalesce(p.room, $11) AS product_room
         FROM candidates c LEFT JOIN room r ON r.endpoint_id = c.endpoint_id LEFT JOIN product_room p ON p.product_id = c.product_id),
     picked AS (
       SELECT d.id, d.attempts, d.locked_until IS NOT NULL AS interrupted
         FROM webhook_deliveries d JOIN ranked k ON k.id = d.id
        WHERE k.rank <= k.room AND k.product_rank <= k.product_room AND d.status = 'pending' AND (d.locked_until IS NULL OR d.locked_until <= now())
        ORDER BY k.next_attempt_at LIMIT $1 FOR UPDATE OF d SKIP LOCKED),
     logged AS (
       INSERT INTO webhook_attempts (delivery_id, number, attempted_at, status_code, duration_ms, error)
       SELECT id, attempts, now(), NULL, 0, $5 FROM picked WHERE interrupted
       ON CONFLICT (delivery_id, number) DO NOTHING),
     claimed AS (
       UPDATE webhook_deliveries d
          SET attempts = d.attempts + CASE WHEN p.attempts >= $4 THEN 0 ELSE 1 END,
              status = CASE WHEN p.attempts >= $4 THEN 'failed' ELSE d.status END,
              locked_until = CASE WHEN p.attempts >= $4 THEN NULL ELSE now() + $2 * interval '1 millisecond' END,
              next_attempt_at = CASE WHEN p.attempts >= $4 THEN NULL ELSE d.next_attempt_at END
         FROM picked p WHERE d.id = p.id
        RETURNING d.id, d.attempts, d.endpoint_id, d.event_id, d.status)
     SELECT c.id, c.attempts, c.endpoint_id, w.product_id, w.url, w.status AS endpoint_status,
            array_remove(ARRAY[w.secret_sealed, CASE WHEN w.previous_secret_until > now() THEN w.previous_secret_sealed END], NULL) AS secrets,
            e.id AS event_id, e.type, e.livemode, e.created_at, e.data
       FROM claimed c JOIN webhook_endpoints w ON w.id = c.endpoint_id JOIN events e ON e.id = c.event_id
      WHERE c.status = 'pending'`;

/**
 * Leases a bounded batch of due deliveries: each attempt is numbered and held for `leaseMs`, so another worker (in this
 * or any process) skips it meanwhile. A first attempt is due `firstDelaySeconds` after the event (the schedule's first
 * delay, 0 by default). An attempt whose lease ended unrecorded was interrupted (its worker died, perhaps after
 * sending): it stays counted, is logged as interrupted, and a delivery whose last attempt it was fails instead of being
 * sent once more, so that no delivery is sent more often than the schedule's `attemptsMax`. Returns what sending needs,
 * in one round trip.
 */
export async function leaseDueDeliveries(
  db: Queryable,
  limits: {
    batchMax: number;
    leaseMs: number;
    firstDelaySeconds: number;
    attemptsMax: number;
    /** Deliveries one endpoint may get in this batch; `room` says less for some (0: none). */
    perEndpointMax: number;
    room?: Map<string, number>;
    /** Deliveries one product may get in this batch; `productRoom` says less for some (0: none). */
    perProductMax: number;
    productRoom?: Map<string, number>;
  },
): Promise<DueDelivery[]> {
  const room = [...(limits.room ?? new Map<string, number>())];
  const productRoom = [...(limits.productRoom ?? new Map<string, number>())];
  return db.query<DueDelivery>(
    LEASE_DUE,
    [
      limits.batchMax,
      limits.leaseMs,
      limits.firstDelaySeconds,
      limits.attemptsMax,
      INTERRUPTED_ATTEMPT,
      room.map(([id]) => id),
      room.map(([, free]) => free),
      limits.perEndpointMax,
      productRoom.map(([id]) => id),
      productRoom.map(([, free]) => free),
      limits.perProductMax,
    ],
  );
}

/**
 * Records attempt `number` of a delivery and what follows: done, failed for good, or the next attempt's time.
 * A worker that lost its lease (a later attempt was claimed) records its attempt but changes nothing else.
 */
export async function recordAttempt(
  db: Queryable,
  attempt: {
    deliveryId: string;
    number: number;
    attemptedAt: Date;
    statusCode: number | null;
    durationMs: number;
    error: string | null;
    responseExcerpt: string | null;
    next: { status: 'succeeded' | 'failed' } | { status: 'pending'; delaySeconds: number };
  },
): Promise<void> {
  await db.query(
    `WITH a AS (
       INSERT INTO webhook_attempts (delivery_id, number, attempted_at, status_code, duration_ms, error, response_excerpt)
       VALUES ($1, $2, $3, $4, $5, $6, $9) ON CONFLICT (delivery_id, number) DO NOTHING RETURNING delivery_id)
     UPDATE webhook_deliveries d
        SET status = $7, locked_until = NULL,
            next_attempt_at = CASE WHEN $7 = 'pending' THEN now() + $8 * interval '1 second' END
       FROM a WHERE d.id = a.delivery_id AND d.attempts = $2`,
    [
      attempt.deliveryId,
      attempt.number,
      attempt.attemptedAt,
      attempt.statusCode,
      attempt.durationMs,
      attempt.error?.slice(0, 500) ?? null,
      attempt.next.status,
      attempt.next.status === 'pending' ? attempt.next.delaySeconds : 0,
      attempt.responseExcerpt,
    ],
  );
}

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  type: string;
  status: 'pending' | 'succeeded' | 'failed';
  next_attempt_at: Date | null;
  created_at: Date;
  seq: number;
  attempts: Array<{
    number: number;
    attempted_at: string;
    status_code: number | null;
    duration_ms: number;
    error: string | null;
    response_excerpt: string | null;
  }>;
}

const SELECT_DELIVERY = `
  SELECT d.id, d.endpoint_id, d.event_id, e.type, d.status, d.next_attempt_at, d.created_at, d.seq,
         coalesce((SELECT json_agg(json_build_object('number', a.number, 'attempted_at', a.attempted_at, 'status_code', a.status_code,
                                                    'duration_ms', a.duration_ms, 'error', a.error,
                                                    'response_excerpt', a.response_excerpt) ORDER BY a.number)
                     FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]') AS attempts
    FROM webhook_deliveries d JOIN events e ON e.id = d.event_id`;

/** An endpoint's deliveries, newest first, each with its attempts. */
export async function listDeliveries(db: Queryable, endpointId: string, before: number, limit: number): Promise<DeliveryRow[]> {
  return db.query<DeliveryRow>(`${SELECT_DELIVERY} WHERE d.endpoint_id = $1 AND d.seq < $2 ORDER BY d.seq DESC LIMIT $3`, [endpointId, before, limit]);
}

/** The deliveries of these events to every endpoint, oldest first, at most `limit`. */
export async function listDeliveriesOfEvents(db: Queryable, eventIds: string[], limit: number): Promise<DeliveryRow[]> {
  return db.query<DeliveryRow>(`${SELECT_DELIVERY} WHERE d.event_id = ANY ($1::text[]) ORDER BY d.seq LIMIT $2`, [eventIds, limit]);
}

export async function findDelivery(db: Queryable, id: string): Promise<DeliveryRow> {
  const [row] = await db.query<DeliveryRow>(`${SELECT_DELIVERY} WHERE d.id = $1`, [id]);
  if (!row) throw new Error(`delivery ${id} vanished`);
  return row;
}

export async function deliverySeq(db: Queryable, endpointId: string, id: string): Promise<number | undefined> {
  const [row] = await db.query<{ seq: number }>('SELECT seq FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2', [id, endpointId]);
  return row?.seq;
}

export async function insertDelivery(tx: Transaction, endpointId: string, eventId: string): Promise<string> {
  const [row] = await tx.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, next_attempt_at)
     VALUES ('wd_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, 'pending', now()) RETURNING id`,
    [endpointId, eventId],
  );
  return row!.id;
}

/** Deletes events past their retention (their deliveries and attempts go with them), a bounded batch at a time. */
export async function deleteOldEvents(db: Queryable, retentionDays: number, batchMax: number): Promise<number> {
  const rows = await db.query(
    `DELETE FROM events WHERE id IN (
       SELECT id FROM events WHERE created_at < now() - $1 * interval '1 day' ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING id`,
    [retentionDays, batchMax],
  );
  return rows.length;
}

/** A delivery of one of `merchant`'s endpoints, with its status: undefined for another product's or mode's. */
export async function findDeliveryOf(db: Queryable, merchant: Merchant, endpointId: string, id: string): Promise<{ id: string; event_id: string; status: DeliveryRow['status'] } | undefined> {
  const [row] = await db.query<{ id: string; event_id: string; status: DeliveryRow['status'] }>(
    `SELECT d.id, d.event_id, d.status FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE d.id = $1 AND d.endpoint_id = $2 AND w.product_id = $3 AND w.livemode = $4 AND w.status <> 'deleted'`,
    [id, endpointId, merchant.productId, merchant.livemode],
  );
  return row;
}

/** Makes a pending delivery due now (its attempts keep their count); false if it is no longer pending. */
export async function dueNow(db: Queryable, id: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1 AND status = 'pending' AND (locked_until IS NULL OR locked_until <= now()) RETURNING id`,
    [id],
  );
  return rows.length === 1;
}

/** Writes an event sent to one endpoint alone (a test event), with its delivery, in one statement. */
export async function insertEventFor(tx: Transaction, merchant: Merchant, endpointId: string, event: { id: string; type: string; data: unknown }): Promise<string> {
  const [row] = await tx.query<{ id: string }>(
    `WITH e AS (INSERT INTO events (id, product_id, livemode, type, object_id, data) VALUES ($1, $2, $3, $4, $5, $6::json) RETURNING id)
     INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, next_attempt_at)
     SELECT 'wd_' || replace(gen_random_uuid()::text, '-', ''), $5, e.id, 'pending', now() FROM e RETURNING id`,
    [event.id, merchant.productId, merchant.livemode, event.type, endpointId, JSON.stringify(event.data)],
  );
  return row!.id;
}

/**
 * Since when an endpoint has been failing: the first attempt of its oldest delivery still pending after a failed
 * attempt, provided nothing reached it since; null when it is not failing.
 */
export async function failingSince(db: Queryable, endpointId: string): Promise<{ since: Date; pending: number } | undefined> {
  const [row] = await db.query<{ since: Date | null; pending: number }>(
    `WITH last_success AS (
       SELECT max(a.attempted_at) AS at FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE d.endpoint_id = $1 AND a.status_code BETWEEN 200 AND 299),
     failing AS (
       SELECT d.id FROM webhook_deliveries d WHERE d.endpoint_id = $1 AND d.status = 'pending' AND d.attempts > 0)
     SELECT (SELECT min(a.attempted_at) FROM webhook_attempts a JOIN failing f ON f.id = a.delivery_id
              WHERE a.attempted_at > coalesce((SELECT at FROM last_success), '-infinity')) AS since,
            (SELECT count(*)::int FROM failing) AS pending`,
    [endpointId],
  );
  return row && row.since !== null ? { since: row.since, pending: row.pending } : undefined;
}
