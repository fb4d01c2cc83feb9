import { Condition, MatchMode, Webhook } from "../contracts";
import { SqliteDatabase } from "./database";

interface WebhookRow {
    id: string;
    event: string;
    target: string;
    enabled: number;
    conditions: string;
    match: string;
    token: string;
    created_at: number;
    updated_at: number;
}

const COLUMNS = "id, event, target, enabled, conditions, match, token, created_at, updated_at";

const rowToWebhook = (row: WebhookRow): Webhook => ({
    id: row.id,
    event: row.event,
    target: row.target,
    enabled: row.enabled === 1,
    conditions: JSON.parse(row.conditions) as Condition[],
    match: row.match as MatchMode,
    token: row.token,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
});

const webhookToRow = (webhook: Webhook): WebhookRow => ({
    id: webhook.id,
    event: webhook.event,
    target: webhook.target,
    enabled: webhook.enabled ? 1 : 0,
    conditions: JSON.stringify(webhook.conditions),
    match: webhook.match,
    token: webhook.token,
    created_at: webhook.createdAt,
    updated_at: webhook.updatedAt,
});

/** The register of webhooks. Synchronous: callers decide the transaction (see WriteBatcher). */
export class WebhookStore {
    private readonly statements;

    public constructor(db: SqliteDatabase) {
        this.statements = {
            insert: db.prepare<WebhookRow>(
                `INSERT INTO webhooks (${COLUMNS}) VALUES (@id, @event, @target, @enabled, @conditions, @match, @token, @created_at, @updated_at)`,
            ),
            update: db.prepare<WebhookRow>(
                `UPDATE webhooks SET event = @event, target = @target, enabled = @enabled, conditions = @conditions,
                 match = @match, updated_at = @updated_at WHERE id = @id`,
            ),
            upsert: db.prepare<WebhookRow>(
                `INSERT INTO webhooks (${COLUMNS}) VALUES (@id, @event, @target, @enabled, @conditions, @match, @token, @created_at, @updated_at)
                 ON CONFLICT (id) DO UPDATE SET event = @event, target = @target, enabled = @enabled,
                 conditions = @conditions, match = @match, token = @token, updated_at = @updated_at`,
            ),
            delete: db.prepare<[string]>("DELETE FROM webhooks WHERE id = ?"),
            findById: db.prepare<[string], WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE id = ?`),
            page: db.prepare<[number, number], WebhookRow>(
                `SELECT ${COLUMNS} FROM webhooks ORDER BY seq LIMIT ? OFFSET ?`,
            ),
            count: db.prepare<[], { total: number }>("SELECT COUNT(*) AS total FROM webhooks"),
            idsAfter: db.prepare<[number, number], { seq: number; id: string }>(
                "SELECT seq, id FROM webhooks WHERE seq > ? ORDER BY seq LIMIT ?",
            ),
            all: db.prepare<[], WebhookRow>(`SELECT ${COLUMNS} FROM webhooks ORDER BY seq`),
        };
    }

    public insert(webhook: Webhook): void {
        this.statements.insert.run(webhookToRow(webhook));
    }

    /** Writes every field but the token, which an update never changes. */
    public update(webhook: Webhook): boolean {
        return this.statements.update.run(webhookToRow(webhook)).changes === 1;
    }

    /** Writes the webhook as it is elsewhere (the shared register), token included. */
    public upsert(webhook: Webhook): void {
        this.statements.upsert.run(webhookToRow(webhook));
    }

    public delete(id: string): boolean {
        return this.statements.delete.run(id).changes === 1;
    }

    public findById(id: string): Webhook | undefined {
        const row = this.statements.findById.get(id);
        return row ? rowToWebhook(row) : undefined;
    }

    public page(offset: number, limit: number): Webhook[] {
        return this.statements.page.all(limit, offset).map(rowToWebhook);
    }

    /** Up to `limit` ids in the order they were added, after the one at `seq` (0: from the first). */
    public idsAfter(seq: number, limit: number): Array<{ seq: number; id: string }> {
        return this.statements.idsAfter.all(seq, limit);
    }

    public count(): number {
        return this.statements.count.get()?.total ?? 0;
    }

    public *all(): IterableIterator<Webhook> {
        for (const row of this.statements.all.iterate()) {
            yield rowToWebhook(row);
        }
    }
}
