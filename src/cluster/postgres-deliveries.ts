import { PoolClient } from "pg";

import { Attempt, Delivery, DeliveryStatus } from "../contracts";
import { AttemptOutcome } from "../store/delivery-store";
import { SCHEMA } from "./postgres-schema";
import { PostgresOptions, SharedDatabase } from "./shared-database";

/** Where a relay announces that deliveries fell due (forwarded or made due again); any relay may take them. */
export const DELIVERIES_CHANNEL = "core_wallet_webhooks_deliveries";

interface DeliveryRow {
    id: string;
    webhook_id: string;
    event: string;
    body: string;
    status: string;
    attempts: number;
    // BIGINT columns arrive as strings: JavaScript numbers cannot hold every BIGINT.
    next_attempt_at: string | null;
    reason: string | null;
    created_at: string;
    updated_at: string;
}

interface AttemptRow {
    delivery_id: string;
    number: number;
    started_at: string;
    duration_ms: number;
    status_code: number | null;
    error: string | null;
    response_excerpt: string | null;
}

const COLUMNS = "id, webhook_id, event, body, status, attempts, next_attempt_at, reason, created_at, updated_at";
const DELIVERIES = `${SCHEMA}.deliveries`;
const ATTEMPTS = `${SCHEMA}.attempts`;

const rowToDelivery = (row: DeliveryRow): Delivery => ({
    id: row.id,
    webhookId: row.webhook_id,
    event: row.event,
    body: row.body,
    status: row.status as DeliveryStatus,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at === null ? null : Number(row.next_attempt_at),
    reason: row.reason,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
});

const rowToAttempt = (row: AttemptRow): Attempt => ({
    deliveryId: row.delivery_id,
    number: row.number,
    startedAt: Number(row.started_at),
    durationMs: row.duration_ms,
    statusCode: row.status_code,
    error: row.error,
    responseExcerpt: row.response_excerpt,
});

/**
 * The deliveries every relay shares, in PostgreSQL. A delivery forwarded twice (two relays saw its
 * chain event, or a relay forwarded again after a crash) is written once: its id decides. A relay
 * takes due deliveries with a lease (FOR UPDATE SKIP LOCKED, so relays never wait on each other or
 * take the same rows), and its outcome is written only while the lease is still its own: a relay
 * that stopped mid-delivery leaves rows whose lease runs out, and another relay takes them then.
 */
export class PostgresDeliveries {
    private readonly db: SharedDatabase;
    public readonly database: string;

    public constructor(
        options: PostgresOptions,
        /** This relay's name on the leases it holds. */
        private readonly relay: string,
    ) {
        this.db = new SharedDatabase(options);
        this.database = this.db.description;
    }

    /**
     * Writes deliveries this relay owes (its own file's, oldest first); those already there are
     * passed over. Returns the webhooks the shared register does not hold (yet: a relay moving its
     * own register in may forward first), whose deliveries were not written. Announces the rest on
     * DELIVERIES_CHANNEL.
     */
    public async forward(deliveries: readonly Delivery[]): Promise<string[]> {
        if (deliveries.length === 0) {
            return [];
        }
        const column = <T>(pick: (delivery: Delivery) => T): T[] => deliveries.map(pick);
        const result = await this.db.read((client) =>
            client.query<{ unknown_webhook: string | null }>(
                `WITH incoming AS (
                     SELECT i.*, EXISTS (SELECT 1 FROM ${SCHEMA}.webhooks w WHERE w.id = i.webhook_id) AS known
                     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::bigint[], $7::bigint[])
                     WITH ORDINALITY AS i (id, webhook_id, event, body, attempts, next_attempt_at, created_at, n)
                 ), written AS (
                     INSERT INTO ${DELIVERIES} (id, webhook_id, event, body, status, attempts, next_attempt_at, created_at, updated_at)
                     SELECT id, webhook_id, event, body, 'pending', attempts, next_attempt_at, created_at, created_at
                     FROM incoming WHERE known
                     ORDER BY n
                     ON CONFLICT (id) DO NOTHING
                     RETURNING id
                 ), notice AS (
                     SELECT pg_notify($8, '') WHERE EXISTS (SELECT 1 FROM written)
                 )
                 SELECT DISTINCT webhook_id AS unknown_webhook FROM incoming WHERE NOT known
                 UNION ALL SELECT NULL FROM notice`,
                [
                    column((delivery) => delivery.id),
                    column((delivery) => delivery.webhookId),
                    column((delivery) => delivery.event),
                    column((delivery) => delivery.body),
                    column((delivery) => delivery.attempts),
                    column((delivery) => delivery.nextAttemptAt ?? delivery.createdAt),
                    column((delivery) => delivery.createdAt),
                    DELIVERIES_CHANNEL,
                ],
            ),
        );
        return result.rows.flatMap((row) => (row.unknown_webhook === null ? [] : [row.unknown_webhook]));
    }

    /**
     * The webhooks with a delivery due at `now` (or whose lease ran out). A loose scan of the pending
     * index: one probe per webhook with pending deliveries, however many deliveries wait.
     */
    public async dueWebhookIds(now: number): Promise<string[]> {
        return this.db.read(async (client) => {
            const found = await client.query<{ webhook_id: string }>(
                `WITH RECURSIVE pending (webhook_id) AS (
                     (SELECT webhook_id FROM ${DELIVERIES} WHERE status = 'pending' ORDER BY webhook_id LIMIT 1)
                     UNION ALL
                     SELECT (
                         SELECT d.webhook_id FROM ${DELIVERIES} d
                         WHERE d.status = 'pending' AND d.webhook_id > pending.webhook_id
                         ORDER BY d.webhook_id LIMIT 1
                     ) FROM pending WHERE pending.webhook_id IS NOT NULL
                 )
                 SELECT webhook_id FROM pending p
                 WHERE p.webhook_id IS NOT NULL AND EXISTS (
                     SELECT 1 FROM ${DELIVERIES} d
                     WHERE d.webhook_id = p.webhook_id AND d.status = 'pending' AND d.next_attempt_at <= $1
                 )`,
                [now],
            );
            return found.rows.map((row) => row.webhook_id);
        });
    }

    /** Takes up to `limit` of the webhook's due deliveries, soonest first, leased to this relay until `leaseUntil`. */
    public async claim(webhookId: string, now: number, limit: number, leaseUntil: number): Promise<Delivery[]> {
        return this.db.read(async (client) => {
            const claimed = await client.query<DeliveryRow & { seq: string }>(
                `UPDATE ${DELIVERIES} d SET next_attempt_at = $4, lease_owner = $5
                 FROM (
                     SELECT id FROM ${DELIVERIES}
                     WHERE webhook_id = $1 AND status = 'pending' AND next_attempt_at <= $2
                     ORDER BY next_attempt_at, seq LIMIT $3
                     FOR UPDATE SKIP LOCKED
                 ) due
                 WHERE d.id = due.id
                 RETURNING d.seq, ${COLUMNS.split(", ")
                     .map((column) => `d.${column}`)
                     .join(", ")}`,
                [webhookId, now, limit, leaseUntil, this.relay],
            );
            return claimed.rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map(rowToDelivery);
        });
    }

    /**
     * Writes the outcomes of attempts made under this relay's leases, in one statement: each
     * delivery's next state and its attempt. An outcome whose lease another relay took meanwhile
     * (it ran out, or the delivery was made due again) is passed over: the other attempt counts.
     */
    public async recordAll(outcomes: readonly AttemptOutcome[]): Promise<void> {
        if (outcomes.length === 0) {
            return;
        }
        const column = <T>(pick: (outcome: AttemptOutcome) => T): T[] => outcomes.map(pick);
        await this.db.read((client) =>
            client.query(
                `WITH outcome AS (
                     SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::bigint[], $5::bigint[],
                                          $6::double precision[], $7::int[], $8::text[], $9::text[])
                     AS o (id, number, status, next_attempt_at, started_at, duration_ms, status_code, error, excerpt)
                 ), updated AS (
                     UPDATE ${DELIVERIES} d SET status = o.status, attempts = o.number, next_attempt_at = o.next_attempt_at,
                         lease_owner = NULL, updated_at = o.started_at + o.duration_ms::bigint
                     FROM outcome o
                     WHERE d.id = o.id AND d.lease_owner = $10 AND d.attempts = o.number - 1
                     RETURNING d.id
                 )
                 INSERT INTO ${ATTEMPTS} (delivery_id, number, started_at, duration_ms, status_code, error, response_excerpt)
                 SELECT o.id, o.number, o.started_at, o.duration_ms, o.status_code, o.error, o.excerpt
                 FROM outcome o JOIN updated u ON u.id = o.id
                 ON CONFLICT DO NOTHING`,
                [
                    column((outcome) => outcome.attempt.deliveryId),
                    column((outcome) => outcome.attempt.number),
                    column((outcome) => outcome.status),
                    column((outcome) => outcome.nextAttemptAt),
                    column((outcome) => outcome.attempt.startedAt),
                    column((outcome) => outcome.attempt.durationMs),
                    column((outcome) => outcome.attempt.statusCode),
                    column((outcome) => outcome.attempt.error),
                    column((outcome) => outcome.attempt.responseExcerpt),
                    this.relay,
                ],
            ),
        );
    }

    /** Ends this relay's leases of deliveries whose attempt ended without an outcome: they are due again. */
    public async release(deliveryIds: readonly string[], now: number): Promise<void> {
        await this.db.read((client) =>
            client.query(
                `UPDATE ${DELIVERIES} SET next_attempt_at = $2, lease_owner = NULL
                 WHERE id = ANY($1::text[]) AND lease_owner = $3 AND status = 'pending'`,
                [deliveryIds, now, this.relay],
            ),
        );
    }

    /** When the next pending delivery not yet due (or leased) falls due; null when none waits. */
    public async nextDueAfter(now: number): Promise<number | null> {
        return this.db.read(async (client) => {
            const found = await client.query<{ next: string | null }>(
                `SELECT MIN(next_attempt_at) AS next FROM ${DELIVERIES} WHERE status = 'pending' AND next_attempt_at > $1`,
                [now],
            );
            const next = found.rows[0]?.next ?? null;
            return next === null ? null : Number(next);
        });
    }

    /** Ends every pending delivery of a webhook as cancelled, with the reason; returns how many. */
    public async cancelPending(webhookId: string, reason: string, now: number): Promise<number> {
        return this.db.read(async (client) => {
            const cancelled = await client.query(
                `UPDATE ${DELIVERIES} SET status = 'cancelled', next_attempt_at = NULL, reason = $1, updated_at = $2,
                     lease_owner = NULL
                 WHERE webhook_id = $3 AND status = 'pending'`,
                [reason, now, webhookId],
            );
            return cancelled.rowCount ?? 0;
        });
    }

    /** How many of the webhook's most recent finished deliveries died in a row, whichever relay made them. */
    public async deadStreak(webhookId: string, window: number): Promise<number> {
        return this.db.read(async (client) => {
            const recent = await client.query<{ status: string }>(
                `SELECT status FROM ${DELIVERIES} WHERE webhook_id = $1 AND status <> 'pending'
                 ORDER BY updated_at DESC, seq DESC LIMIT $2`,
                [webhookId, window],
            );
            const firstAlive = recent.rows.findIndex((row) => row.status !== "dead");
            return firstAlive === -1 ? recent.rows.length : firstAlive;
        });
    }

    public async purgeFinishedBefore(cutoff: number): Promise<number> {
        return this.db.read(async (client) => {
            const purged = await client.query(
                `DELETE FROM ${DELIVERIES} WHERE status <> 'pending' AND updated_at < $1`,
                [cutoff],
            );
            return purged.rowCount ?? 0;
        });
    }

    public async counts(): Promise<{ pending: number; dead: number }> {
        return this.db.read(async (client) => {
            const found = await client.query<{ pending: string; dead: string }>(
                `SELECT (SELECT COUNT(*) FROM ${DELIVERIES} WHERE status = 'pending') AS pending,
                        (SELECT COUNT(*) FROM ${DELIVERIES} WHERE status = 'dead') AS dead`,
            );
            return { pending: Number(found.rows[0]?.pending ?? 0), dead: Number(found.rows[0]?.dead ?? 0) };
        });
    }

    // What the API shows, whichever relay made the deliveries.

    public async find(webhookId: string, id: string): Promise<Delivery | undefined> {
        return this.db.read(async (client) => this.findWith(client, webhookId, id));
    }

    public async attempts(deliveryId: string): Promise<Attempt[]> {
        return this.db.read(async (client) => {
            const found = await client.query<AttemptRow>(
                `SELECT delivery_id, number, started_at, duration_ms, status_code, error, response_excerpt
                 FROM ${ATTEMPTS} WHERE delivery_id = $1 ORDER BY number`,
                [deliveryId],
            );
            return found.rows.map(rowToAttempt);
        });
    }

    public async page(
        webhookId: string,
        offset: number,
        limit: number,
    ): Promise<{ deliveries: Delivery[]; totalCount: number }> {
        return this.db.read(async (client) => {
            const rows = await client.query<DeliveryRow>(
                `SELECT ${COLUMNS} FROM ${DELIVERIES} WHERE webhook_id = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3`,
                [webhookId, limit, offset],
            );
            const count = await client.query<{ total: string }>(
                `SELECT COUNT(*) AS total FROM ${DELIVERIES} WHERE webhook_id = $1`,
                [webhookId],
            );
            return { deliveries: rows.rows.map(rowToDelivery), totalCount: Number(count.rows[0]?.total ?? 0) };
        });
    }

    /**
     * Makes a delivery due again now, whatever its state, and announces it; undefined when it does
     * not exist. A lease on it ends: the attempt under it no longer counts.
     */
    public async redeliver(webhookId: string, id: string, now: number): Promise<Delivery | undefined> {
        return this.db.read(async (client) => {
            const again = await client.query<DeliveryRow>(
                `WITH again AS (
                     UPDATE ${DELIVERIES} SET status = 'pending', next_attempt_at = $1, reason = NULL, updated_at = $1,
                         lease_owner = NULL
                     WHERE id = $2 AND webhook_id = $3
                     RETURNING ${COLUMNS}
                 ), notice AS (SELECT pg_notify($4, '') FROM again)
                 SELECT again.* FROM again LEFT JOIN notice ON true`,
                [now, id, webhookId, DELIVERIES_CHANNEL],
            );
            return again.rows.length === 0 ? undefined : rowToDelivery(again.rows[0]);
        });
    }

    public async close(): Promise<void> {
        await this.db.close();
    }

    private async findWith(client: PoolClient, webhookId: string, id: string): Promise<Delivery | undefined> {
        const found = await client.query<DeliveryRow>(
            `SELECT ${COLUMNS} FROM ${DELIVERIES} WHERE id = $1 AND webhook_id = $2`,
            [id, webhookId],
        );
        return found.rows.length === 0 ? undefined : rowToDelivery(found.rows[0]);
    }
}
