import { randomUUID } from "crypto";
import { PoolClient } from "pg";

import { Condition, MatchMode, Webhook } from "../contracts";
import { RegisterRefusedError, SharedRegisterStore } from "../webhooks/shared-register";
import { SCHEMA } from "./postgres-schema";
import { PostgresOptions, SharedDatabase } from "./shared-database";

/** Where every change to the shared register is announced, with the webhook's id. */
export const REGISTER_CHANNEL = "core_wallet_webhooks_register";

interface WebhookRow {
    id: string;
    event: string;
    target: string;
    enabled: boolean;
    conditions: string;
    match: string;
    token: string;
    // BIGINT columns arrive as strings: JavaScript numbers cannot hold every BIGINT.
    created_at: string;
    updated_at: string;
}

const COLUMNS = "id, event, target, enabled, conditions, match, token, created_at, updated_at";

const rowToWebhook = (row: WebhookRow): Webhook => ({
    id: row.id,
    event: row.event,
    target: row.target,
    enabled: row.enabled,
    conditions: JSON.parse(row.conditions) as Condition[],
    match: row.match as MatchMode,
    token: row.token,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
});

const valuesOf = (webhook: Webhook): unknown[] => [
    webhook.id,
    webhook.event,
    webhook.target,
    webhook.enabled,
    JSON.stringify(webhook.conditions),
    webhook.match,
    webhook.token,
    webhook.createdAt,
    webhook.updatedAt,
];

// Runs of relays not seen for a day are forgotten (each relay's run is a new row).
const FORGET_RELAYS_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * The register of webhooks in a PostgreSQL every relay shares. Each write is one transaction that
 * also announces the webhook's id on REGISTER_CHANNEL (NOTIFY is sent on commit), so every relay
 * that listens reads the change within moments.
 */
export class PostgresRegister implements SharedRegisterStore {
    private readonly db: SharedDatabase;
    public readonly database: string;
    /** This relay's name in the notices it sends, so that it can pass over its own. */
    public readonly relay = randomUUID();
    /** Why this relay writes nothing to the shared register, while it refuses it (see refuse()). */
    private refusal: string | undefined;

    public constructor(options: PostgresOptions) {
        this.db = new SharedDatabase(options);
        this.database = this.db.description;
    }

    /** Creates or upgrades the shared schema once per run; refuses a schema newer than the plugin. */
    public migrate(): Promise<void> {
        return this.db.migrate();
    }

    /** The identity the shared register was created with (see POSTGRES_MIGRATIONS). */
    public async identity(): Promise<string> {
        return this.read(
            async (client) =>
                (await client.query<{ id: string }>(`SELECT id FROM ${SCHEMA}.register_identity LIMIT 1`)).rows[0].id,
        );
    }

    /**
     * Says that this run of the relay named `name` is alive, and tells whether another run of a
     * relay under that name said so within `withinMs` (two relays given one name): its last time.
     */
    public async announce(name: string, run: string, now: number, withinMs: number): Promise<number | undefined> {
        return this.read(async (client) => {
            const { rows } = await client.query<{ seen_at: string | null }>(
                `WITH written AS (
                     INSERT INTO ${SCHEMA}.relays (name, run, seen_at) VALUES ($1, $2, $3)
                     ON CONFLICT (name, run) DO UPDATE SET seen_at = excluded.seen_at
                 ), forgotten AS (
                     DELETE FROM ${SCHEMA}.relays WHERE seen_at < $3 - ${FORGET_RELAYS_AFTER_MS}
                 )
                 SELECT MAX(seen_at) AS seen_at FROM ${SCHEMA}.relays WHERE name = $1 AND run <> $2 AND seen_at > $3 - $4`,
                [name, run, now, withinMs],
            );
            const seen = rows[0]?.seen_at;
            return seen === null || seen === undefined ? undefined : Number(seen);
        });
    }

    public async count(): Promise<number> {
        return this.read(async (client) =>
            Number((await client.query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${SCHEMA}.webhooks`)).rows[0].n),
        );
    }

    /** From now on every write fails with `reason`, until accept(): reads stay allowed. */
    public refuse(reason: string): void {
        this.refusal = reason;
    }

    public accept(): void {
        this.refusal = undefined;
    }

    // Each write is one statement, and so its own transaction: the change and its notice commit
    // together, in one round trip.

    public async insert(webhook: Webhook): Promise<void> {
        this.assertAccepted();
        await this.read((client) =>
            client.query(
                `WITH written AS (
                     INSERT INTO ${SCHEMA}.webhooks (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id
                 )
                 SELECT pg_notify($10, $11) FROM written`,
                [...valuesOf(webhook), REGISTER_CHANNEL, this.notice(webhook.id)],
            ),
        );
    }

    /**
     * Reads the webhook, applies `change`, and writes it only if nobody changed it meanwhile (its
     * updated_at is still the one read); otherwise reads it again: two relays changing one webhook
     * at once both take effect, in some order, without a lock held across round trips.
     */
    public async update(
        id: string,
        change: (current: Webhook) => Webhook,
    ): Promise<{ previous: Webhook; next: Webhook } | undefined> {
        this.assertAccepted();
        for (;;) {
            const previous = await this.find(id);
            if (!previous) {
                return undefined;
            }
            const next = change(previous);
            const written = await this.read((client) =>
                client.query(
                    `WITH written AS (
                         UPDATE ${SCHEMA}.webhooks SET event = $2, target = $3, enabled = $4, conditions = $5,
                         match = $6, updated_at = $7 WHERE id = $1 AND updated_at = $8 RETURNING id
                     )
                     SELECT pg_notify($9, $10) FROM written`,
                    [
                        id,
                        next.event,
                        next.target,
                        next.enabled,
                        JSON.stringify(next.conditions),
                        next.match,
                        next.updatedAt,
                        previous.updatedAt,
                        REGISTER_CHANNEL,
                        this.notice(id),
                    ],
                ),
            );
            if (written.rowCount === 1) {
                return { previous, next };
            }
        }
    }

    public async delete(id: string): Promise<boolean> {
        this.assertAccepted();
        const deleted = await this.read((client) =>
            client.query(
                `WITH gone AS (DELETE FROM ${SCHEMA}.webhooks WHERE id = $1 RETURNING id) SELECT pg_notify($2, $3) FROM gone`,
                [id, REGISTER_CHANNEL, this.notice(id)],
            ),
        );
        return deleted.rowCount === 1;
    }

    public async insertMissing(webhooks: readonly Webhook[]): Promise<Webhook[]> {
        this.assertAccepted();
        return this.transaction(async (client) => {
            const added: Webhook[] = [];
            for (const webhook of webhooks) {
                const inserted = await client.query(
                    `INSERT INTO ${SCHEMA}.webhooks (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                     ON CONFLICT (id) DO NOTHING`,
                    valuesOf(webhook),
                );
                if (inserted.rowCount === 1) {
                    await client.query("SELECT pg_notify($1, $2)", [REGISTER_CHANNEL, this.notice(webhook.id)]);
                    added.push(webhook);
                }
            }
            return added;
        });
    }

    public async all(): Promise<Webhook[]> {
        return this.read(async (client) =>
            (await client.query<WebhookRow>(`SELECT ${COLUMNS} FROM ${SCHEMA}.webhooks ORDER BY seq`)).rows.map(
                rowToWebhook,
            ),
        );
    }

    public async find(id: string): Promise<Webhook | undefined> {
        return this.read(async (client) => {
            const found = await client.query<WebhookRow>(`SELECT ${COLUMNS} FROM ${SCHEMA}.webhooks WHERE id = $1`, [
                id,
            ]);
            return found.rows.length === 0 ? undefined : rowToWebhook(found.rows[0]);
        });
    }

    public async close(): Promise<void> {
        await this.db.close();
    }

    private assertAccepted(): void {
        if (this.refusal !== undefined) {
            throw new RegisterRefusedError(this.refusal);
        }
    }

    /** The notice of a change: the webhook, and this relay (which applied its own change already). */
    private notice(id: string): string {
        return JSON.stringify({ id, relay: this.relay });
    }

    private read<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
        return this.db.read(work);
    }

    private transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
        return this.db.transaction(work);
    }
}
