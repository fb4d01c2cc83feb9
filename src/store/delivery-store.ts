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

const COLUMNS = "id, webhook_id, event, body, status, attempts, next_attempt_at, created_at, updated_at";

const rowToDelivery = (row: DeliveryRow): Delivery => ({
    id: row.id,
    webhookId: row.webhook_id,
    event: row.event,
    body: row.body,
    status: row.status as DeliveryStatus,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
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

/** An event and the deliveries it owes, as the listener writes it: one row, whatever the fan-out. */
export interface JournaledEvent {
    event: string;
    /** The exact body every delivery of the event posts. */
    body: string;
    createdAt: number;
    deliveries: ReadonlyArray<{ id: string; webhookId: string }>;
}

interface JournalRow {
    seq: number;
    event: string;
    body: string;
    created_at: number;
    deliveries: string;
}

// Events moved from the journal into deliveries per transaction.
const EXPANSION_BATCH = 500;

export interface DueDelivery {
    id: string;
    webhookId: string;
}

interface DueRow {
    id: string;
    webhook_id: string;
}

const rowToDue = (row: DueRow): DueDelivery => ({ id: row.id, webhookId: row.webhook_id });

/** What one attempt led to: the delivery's next state and the attempt to log. */
export interface AttemptOutcome {
    attempt: Attempt;
    status: DeliveryStatus;
    nextAttemptAt: number | null;
}

/** The outbox: deliveries owed, their state and every attempt made. */
export class DeliveryStore {
    private readonly statements;
    private readonly expandBatch: () => number;
    private readonly recordAll: (outcome: AttemptOutcome) => void;

    public constructor(db: SqliteDatabase) {
        this.statements = {
            journal: db.prepare<[string, string, number, string]>(
                "INSERT INTO event_journal (event, body, created_at, deliveries) VALUES (?, ?, ?, ?)",
            ),
            journaled: db.prepare<[number], JournalRow>(
                "SELECT seq, event, body, created_at, deliveries FROM event_journal ORDER BY seq LIMIT ?",
            ),
            hasJournaled: db.prepare<[], { seq: number }>("SELECT seq FROM event_journal LIMIT 1"),
            forgetJournaled: db.prepare<[number]>("DELETE FROM event_journal WHERE seq <= ?"),
            // A webhook deleted since its event was journaled owes nothing.
            insert: db.prepare<[string, string, string, string, number, number, number, string]>(
                `INSERT INTO deliveries (id, webhook_id, event, body, status, attempts, next_attempt_at, created_at, updated_at)
                 SELECT ?, ?, ?, ?, 'pending', 0, ?, ?, ? WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = ?)`,
            ),
            pendingWebhooks: db.prepare<[], { webhook_id: string }>(
                "SELECT DISTINCT webhook_id FROM deliveries WHERE status = 'pending'",
            ),
            nextDueOf: db.prepare<[string], { next: number | null }>(
                "SELECT MIN(next_attempt_at) AS next FROM deliveries WHERE webhook_id = ? AND status = 'pending'",
            ),
            // Ids only: the dispatcher reads a delivery whole when it starts it.
            dueOf: db.prepare<[string, number, number], DueRow>(
                `SELECT id, webhook_id FROM deliveries
                 WHERE webhook_id = ? AND status = 'pending' AND next_attempt_at <= ?
                 ORDER BY next_attempt_at, seq LIMIT ?`,
            ),
            findById: db.prepare<[string], DeliveryRow>(`SELECT ${COLUMNS} FROM deliveries WHERE id = ?`),
            nextDue: db.prepare<[], { next: number | null }>(
                "SELECT MIN(next_attempt_at) AS next FROM deliveries WHERE status = 'pending'",
            ),
            find: db.prepare<[string, string], DeliveryRow>(
                `SELECT ${COLUMNS} FROM deliveries WHERE id = ? AND webhook_id = ?`,
            ),
            page: db.prepare<[string, number, number], DeliveryRow>(
                `SELECT ${COLUMNS} FROM deliveries WHERE webhook_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?`,
            ),
            count: db.prepare<[string], { total: number }>(
                "SELECT COUNT(*) AS total FROM deliveries WHERE webhook_id = ?",
            ),
            attempts: db.prepare<[string], AttemptRow>(
                `SELECT delivery_id, number, started_at, duration_ms, status_code, error, response_excerpt
                 FROM attempts WHERE delivery_id = ? ORDER BY number`,
            ),
            insertAttempt: db.prepare<AttemptRow>(
                `INSERT INTO attempts (delivery_id, number, started_at, duration_ms, status_code, error, response_excerpt)
                 VALUES (@delivery_id, @number, @started_at, @duration_ms, @status_code, @error, @response_excerpt)`,
            ),
            updateState: db.prepare<[string, number, number | null, number, string]>(
                "UPDATE deliveries SET status = ?, attempts = ?, next_attempt_at = ?, updated_at = ? WHERE id = ?",
            ),
            reschedule: db.prepare<[number, number, string, string]>(
                `UPDATE deliveries SET status = 'pending', next_attempt_at = ?, updated_at = ?
                 WHERE id = ? AND webhook_id = ?`,
            ),
            deadStreak: db.prepare<[string, number], { status: string }>(
                `SELECT status FROM deliveries WHERE webhook_id = ? AND status <> 'pending'
                 ORDER BY updated_at DESC, seq DESC LIMIT ?`,
            ),
            purge: db.prepare<[number]>("DELETE FROM deliveries WHERE status <> 'pending' AND updated_at < ?"),
            pendingCount: db.prepare<[], { total: number }>(
                "SELECT COUNT(*) AS total FROM deliveries WHERE status = 'pending'",
            ),
        };
        this.expandBatch = db.transaction((): number => {
            const rows = this.statements.journaled.all(EXPANSION_BATCH);
            for (const row of rows) {
                for (const [id, webhookId] of JSON.parse(row.deliveries) as Array<[string, string]>) {
                    const at = row.created_at;
                    this.statements.insert.run(id, webhookId, row.event, row.body, at, at, at, webhookId);
                }
            }
            if (rows.length > 0) {
                this.statements.forgetJournaled.run(rows[rows.length - 1].seq);
            }
            return rows.length;
        });
        this.recordAll = db.transaction((outcome: AttemptOutcome) => {
            const { attempt } = outcome;
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
                outcome.status,
                attempt.number,
                outcome.nextAttemptAt,
                attempt.startedAt + attempt.durationMs,
                attempt.deliveryId,
            );
        });
    }

    /**
     * Owes an event's deliveries: one row and one implicit transaction, however many webhooks it
     * matched, so the listener's cost does not grow with the fan-out. Durable once this returns.
     */
    public journal({ event, body, createdAt, deliveries }: JournaledEvent): void {
        const pairs = deliveries.map(({ id, webhookId }) => [id, webhookId]);
        this.statements.journal.run(event, body, createdAt, JSON.stringify(pairs));
    }

    /** Turns every journaled event into its delivery rows, in batches; returns how many events moved. */
    public expandJournal(): number {
        let moved = 0;
        for (let batch = this.expandBatch(); batch > 0; batch = this.expandBatch()) {
            moved += batch;
        }
        return moved;
    }

    /** The webhooks owed at least one pending delivery. */
    public pendingWebhookIds(): string[] {
        this.settle();
        return this.statements.pendingWebhooks.all().map((row) => row.webhook_id);
    }

    /** When the webhook's next pending delivery is due; null when it has none. */
    public nextDueOf(webhookId: string): number | null {
        return this.statements.nextDueOf.get(webhookId)?.next ?? null;
    }

    /** One webhook's due deliveries, soonest first, as ids; `load()` reads one whole. */
    public dueOf(webhookId: string, now: number, limit: number): DueDelivery[] {
        this.settle();
        return this.statements.dueOf.all(webhookId, now, limit).map(rowToDue);
    }

    public load(id: string): Delivery | undefined {
        const row = this.statements.findById.get(id);
        return row ? rowToDelivery(row) : undefined;
    }

    public nextDueAt(): number | null {
        this.settle();
        return this.statements.nextDue.get()?.next ?? null;
    }

    public record(outcome: AttemptOutcome): void {
        this.recordAll(outcome);
    }

    public find(webhookId: string, id: string): Delivery | undefined {
        this.settle();
        const row = this.statements.find.get(id, webhookId);
        return row ? rowToDelivery(row) : undefined;
    }

    public attempts(deliveryId: string): Attempt[] {
        return this.statements.attempts.all(deliveryId).map(rowToAttempt);
    }

    public page(webhookId: string, offset: number, limit: number): { deliveries: Delivery[]; totalCount: number } {
        this.settle();
        return {
            deliveries: this.statements.page.all(webhookId, limit, offset).map(rowToDelivery),
            totalCount: this.statements.count.get(webhookId)?.total ?? 0,
        };
    }

    /** Makes a delivery due again now, whatever its state; false when it does not exist. */
    public redeliver(webhookId: string, id: string, now: number): boolean {
        return this.statements.reschedule.run(now, now, id, webhookId).changes === 1;
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

    /** Every read sees the deliveries of journaled events; a cheap probe when the journal is empty. */
    private settle(): void {
        if (this.statements.hasJournaled.get()) {
            this.expandJournal();
        }
    }

    public purgeFinishedBefore(cutoff: number): number {
        return this.statements.purge.run(cutoff).changes;
    }

    public pendingCount(): number {
        this.settle();
        return this.statements.pendingCount.get()?.total ?? 0;
    }
}
