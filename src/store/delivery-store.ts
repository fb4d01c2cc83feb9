import { Attempt, Delivery, DeliveryStatus } from "../contracts";
import { SqliteDatabase } from "./database";

interface DeliveryRow {
    id: string;
    webhook_id: string;
    event: string;
    body: string;
    status: string;
    attempts: number;
    next_attempt_at: number | null;
    reason: string | null;
    created_at: number;
    updated_at: number;
}

interface AttemptRow {
    delivery_id: string;
    number: number;
    started_at: number;
    duration_ms: number;
    status_code: number | null;
    error: string | null;
    response_excerpt: string | null;
}

// A delivery's body is in its row, or shared with the other deliveries of its event (body_seq).
const COLUMNS = `d.id, d.webhook_id, d.event, COALESCE(b.body, d.body) AS body, d.status, d.attempts,
    d.next_attempt_at, d.reason, d.created_at, d.updated_at`;
const FROM = "deliveries d LEFT JOIN delivery_bodies b ON b.seq = d.body_seq";

const rowToDelivery = (row: DeliveryRow): Delivery => ({
    id: row.id,
    webhookId: row.webhook_id,
    event: row.event,
    body: row.body,
    status: row.status as DeliveryStatus,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    reason: row.reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
});

const rowToAttempt = (row: AttemptRow): Attempt => ({
    deliveryId: row.delivery_id,
    number: row.number,
    startedAt: row.started_at,
    durationMs: row.duration_ms,
    statusCode: row.status_code,
    error: row.error,
    responseExcerpt: row.response_excerpt,
});

/** What one attempt led to: the delivery's next state and the attempt to log. */
export interface AttemptOutcome {
    attempt: Attempt;
    status: DeliveryStatus;
    nextAttemptAt: number | null;
}

/** A delivery owed now, outside any event (a ping). */
export interface NewDelivery {
    id: string;
    webhookId: string;
    event: string;
    body: string;
    createdAt: number;
}

/** The outbox: deliveries owed, their state and every attempt made. Reads never write. */
export class DeliveryStore {
    private readonly statements;
    private readonly recordInTransaction: (outcomes: readonly AttemptOutcome[]) => void;
    private readonly removeInTransaction: (ids: readonly string[]) => void;

    public constructor(db: SqliteDatabase) {
        this.statements = {
            insert: db.prepare<[string, string, string, string, number, number, number]>(
                `INSERT INTO deliveries (id, webhook_id, event, body, status, attempts, next_attempt_at, created_at, updated_at)
                 VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
            ),
            pendingWebhooks: db.prepare<[], { webhook_id: string }>(
                "SELECT DISTINCT webhook_id FROM deliveries WHERE status = 'pending'",
            ),
            nextDueOf: db.prepare<[string], { next: number | null }>(
                "SELECT MIN(next_attempt_at) AS next FROM deliveries WHERE webhook_id = ? AND status = 'pending'",
            ),
            dueOf: db.prepare<[string, number, number], DeliveryRow>(
                `SELECT ${COLUMNS} FROM ${FROM}
                 WHERE d.webhook_id = ? AND d.status = 'pending' AND d.next_attempt_at <= ?
                 ORDER BY d.next_attempt_at, d.seq LIMIT ?`,
            ),
            nextDueOfAfter: db.prepare<[string, number], { next: number | null }>(
                `SELECT MIN(next_attempt_at) AS next FROM deliveries
                 WHERE webhook_id = ? AND status = 'pending' AND next_attempt_at > ?`,
            ),
            nextDueAfter: db.prepare<[number], { next: number | null }>(
                "SELECT MIN(next_attempt_at) AS next FROM deliveries WHERE status = 'pending' AND next_attempt_at > ?",
            ),
            find: db.prepare<[string, string], DeliveryRow>(
                `SELECT ${COLUMNS} FROM ${FROM} WHERE d.id = ? AND d.webhook_id = ?`,
            ),
            page: db.prepare<[string, number, number], DeliveryRow>(
                `SELECT ${COLUMNS} FROM ${FROM} WHERE d.webhook_id = ? ORDER BY d.seq DESC LIMIT ? OFFSET ?`,
            ),
            count: db.prepare<[string], { total: number }>(
                "SELECT COUNT(*) AS total FROM deliveries WHERE webhook_id = ?",
            ),
            attempts: db.prepare<[string], AttemptRow>(
                `SELECT d.id AS delivery_id, a.number, a.started_at, a.duration_ms, a.status_code, a.error, a.response_excerpt
                 FROM deliveries d JOIN attempts a ON a.delivery_seq = d.seq WHERE d.id = ? ORDER BY a.number`,
            ),
            insertAttempt: db.prepare<AttemptRow>(
                `INSERT INTO attempts (delivery_seq, number, started_at, duration_ms, status_code, error, response_excerpt)
                 SELECT seq, @number, @started_at, @duration_ms, @status_code, @error, @response_excerpt
                 FROM deliveries WHERE id = @delivery_id`,
            ),
            updateState: db.prepare<[string, number, number | null, number, string]>(
                "UPDATE deliveries SET status = ?, attempts = ?, next_attempt_at = ?, updated_at = ? WHERE id = ?",
            ),
            reschedule: db.prepare<[number, number, string, string]>(
                `UPDATE deliveries SET status = 'pending', next_attempt_at = ?, reason = NULL, updated_at = ?
                 WHERE id = ? AND webhook_id = ?`,
            ),
            cancelPending: db.prepare<[string, number, string]>(
                `UPDATE deliveries SET status = 'cancelled', next_attempt_at = NULL, reason = ?, updated_at = ?
                 WHERE webhook_id = ? AND status = 'pending'`,
            ),
            deadStreak: db.prepare<[string, number], { status: string }>(
                `SELECT status FROM deliveries WHERE webhook_id = ? AND status <> 'pending'
                 ORDER BY updated_at DESC, seq DESC LIMIT ?`,
            ),
            purge: db.prepare<[number]>("DELETE FROM deliveries WHERE status <> 'pending' AND updated_at < ?"),
            oldestPending: db.prepare<[string, number], DeliveryRow>(
                `SELECT ${COLUMNS} FROM ${FROM}
                 WHERE d.status = 'pending' AND d.webhook_id NOT IN (SELECT value FROM json_each(?))
                 ORDER BY d.next_attempt_at, d.seq LIMIT ?`,
            ),
            remove: db.prepare<[string]>("DELETE FROM deliveries WHERE id = ?"),
            pendingCount: db.prepare<[], { total: number }>(
                "SELECT COUNT(*) AS total FROM deliveries WHERE status = 'pending'",
            ),
            deadCount: db.prepare<[], { total: number }>(
                "SELECT COUNT(*) AS total FROM deliveries WHERE status = 'dead'",
            ),
        };
        this.removeInTransaction = db.transaction((ids: readonly string[]) =>
            ids.forEach((id) => this.statements.remove.run(id)),
        );
        this.recordInTransaction = db.transaction((outcomes: readonly AttemptOutcome[]) =>
            outcomes.forEach((outcome) => this.recordOne(outcome)),
        );
    }

    private recordOne({ attempt, status, nextAttemptAt }: AttemptOutcome): void {
        this.statements.insertAttempt.run({
            delivery_id: attempt.deliveryId,
            number: attempt.number,
            started_at: attempt.startedAt,
            duration_ms: attempt.durationMs,
            status_code: attempt.statusCode,
            error: attempt.error,
            response_excerpt: attempt.responseExcerpt,
        });
        this.statements.updateState.run(
            status,
            attempt.number,
            nextAttemptAt,
            attempt.startedAt + attempt.durationMs,
            attempt.deliveryId,
        );
    }

    /** Owes one delivery, due now. */
    public add({ id, webhookId, event, body, createdAt }: NewDelivery): void {
        this.statements.insert.run(id, webhookId, event, body, createdAt, createdAt, createdAt);
    }

    /** The webhooks owed at least one pending delivery. */
    public pendingWebhookIds(): string[] {
        return this.statements.pendingWebhooks.all().map((row) => row.webhook_id);
    }

    /** When the webhook's next pending delivery is due; null when it has none. */
    public nextDueOf(webhookId: string): number | null {
        return this.statements.nextDueOf.get(webhookId)?.next ?? null;
    }

    /** One webhook's due deliveries, soonest first. */
    public dueOf(webhookId: string, now: number, limit: number): Delivery[] {
        return this.statements.dueOf.all(webhookId, now, limit).map(rowToDelivery);
    }

    /** When the webhook's next pending delivery not yet due falls due; null when none waits. */
    public nextDueOfAfter(webhookId: string, now: number): number | null {
        return this.statements.nextDueOfAfter.get(webhookId, now)?.next ?? null;
    }

    /** When the next pending delivery not yet due falls due; null when none waits. */
    public nextDueAfter(now: number): number | null {
        return this.statements.nextDueAfter.get(now)?.next ?? null;
    }

    /** The outcomes of attempts, all in one transaction or none: one commit for a turn's worth. */
    public recordAll(outcomes: readonly AttemptOutcome[]): void {
        this.recordInTransaction(outcomes);
    }

    public find(webhookId: string, id: string): Delivery | undefined {
        const row = this.statements.find.get(id, webhookId);
        return row ? rowToDelivery(row) : undefined;
    }

    public attempts(deliveryId: string): Attempt[] {
        return this.statements.attempts.all(deliveryId).map(rowToAttempt);
    }

    public page(webhookId: string, offset: number, limit: number): { deliveries: Delivery[]; totalCount: number } {
        return {
            deliveries: this.statements.page.all(webhookId, limit, offset).map(rowToDelivery),
            totalCount: this.statements.count.get(webhookId)?.total ?? 0,
        };
    }

    /** Makes a delivery due again now, whatever its state; false when it does not exist. */
    public redeliver(webhookId: string, id: string, now: number): boolean {
        return this.statements.reschedule.run(now, now, id, webhookId).changes === 1;
    }

    /** Ends every pending delivery of a webhook as cancelled, with the reason; returns how many. */
    public cancelPending(webhookId: string, reason: string, now: number): number {
        return this.statements.cancelPending.run(reason, now, webhookId).changes;
    }

    /** How many of the webhook's most recent finished deliveries died in a row. */
    public deadStreak(webhookId: string, window: number): number {
        let streak = 0;
        for (const { status } of this.statements.deadStreak.all(webhookId, window)) {
            if (status !== "dead") {
                break;
            }
            streak++;
        }
        return streak;
    }

    /** The oldest pending deliveries, in the order they were owed, but those of `passedOver` webhooks (a shared outbox's next). */
    public oldestPending(limit: number, passedOver: readonly string[] = []): Delivery[] {
        return this.statements.oldestPending.all(JSON.stringify(passedOver), limit).map(rowToDelivery);
    }

    /** Deletes deliveries (and their attempts) that now live elsewhere, in one transaction. */
    public remove(ids: readonly string[]): void {
        this.removeInTransaction(ids);
    }

    public purgeFinishedBefore(cutoff: number): number {
        return this.statements.purge.run(cutoff).changes;
    }

    public pendingCount(): number {
        return this.statements.pendingCount.get()?.total ?? 0;
    }

    public deadCount(): number {
        return this.statements.deadCount.get()?.total ?? 0;
    }
}
