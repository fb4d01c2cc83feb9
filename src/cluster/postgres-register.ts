import { randomUUID } from "crypto";
import { Pool, PoolClient, PoolConfig } from "pg";

import { Condition, MatchMode, Webhook } from "../contracts";
import { SharedRegisterError, SharedRegisterStore } from "../webhooks/shared-register";
import { migratePostgres, SCHEMA, SchemaTooNewError } from "./postgres-schema";

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

export interface PostgresOptions {
    url: string;
    poolSize: number;
    connectionTimeoutMs: number;
}

/** The database a URL names, for messages: host, port and database, never the password. */
export const describeDatabase = (url: string): string => {
    try {
        const parsed = new URL(url);
        return `PostgreSQL at ${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}`;
    } catch {
        return "PostgreSQL";
    }
};

export const connectionConfig = (options: PostgresOptions): PoolConfig => ({
    connectionString: options.url,
    connectionTimeoutMillis: options.connectionTimeoutMs,
    // A query the network left hanging fails instead of holding a request for ever.
    query_timeout: Math.max(10_000, options.connectionTimeoutMs * 2),
    application_name: "core-wallet-webhooks",
});

/**
 * The register of webhooks in a PostgreSQL every relay shares. Each write is one transaction that
 * also announces the webhook's id on REGISTER_CHANNEL (NOTIFY is sent on commit), so every relay
 * that listens reads the change within moments.
 */
export class PostgresRegister implements SharedRegisterStore {
    private readonly pool: Pool;
    private migrated: Promise<void> | undefined;
    public readonly database: string;
    /** This relay's name in the notices it sends, so that it can pass over its own. */
    public readonly relay = randomUUID();

    public constructor(options: PostgresOptions) {
        this.database = describeDatabase(options.url);
        this.pool = new Pool({ ...connectionConfig(options), max: options.poolSize });
        // An idle client whose connection broke: the pool drops it; the next query opens another.
        this.pool.on("error", () => undefined);
    }

    /** Creates or upgrades the shared schema once per run; refuses a schema newer than the plugin. */
    public migrate(): Promise<void> {
        this.migrated ??= this.withClient(migratePostgres).catch((error: unknown) => {
            this.migrated = undefined;
            throw error;
        });
        return this.migrated;
    }

    // Each write is one statement, and so its own transaction: the change and its notice commit
    // together, in one round trip.

    public async insert(webhook: Webhook): Promise<void> {
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
        const deleted = await this.read((client) =>
            client.query(
                `WITH gone AS (DELETE FROM ${SCHEMA}.webhooks WHERE id = $1 RETURNING id) SELECT pg_notify($2, $3) FROM gone`,
                [id, REGISTER_CHANNEL, this.notice(id)],
            ),
        );
        return deleted.rowCount === 1;
    }

    public async insertMissing(webhooks: readonly Webhook[]): Promise<Webhook[]> {
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
        await this.pool.end();
    }

    /** The notice of a change: the webhook, and this relay (which applied its own change already). */
    private notice(id: string): string {
        return JSON.stringify({ id, relay: this.relay });
    }

    private read<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
        return this.withClient(async (client) => {
            await this.migrate();
            return work(client);
        });
    }

    private transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
        return this.read(async (client) => {
            await client.query("BEGIN");
            try {
                const result = await work(client);
                await client.query("COMMIT");
                return result;
            } catch (error) {
                await client.query("ROLLBACK").catch(() => undefined);
                throw error;
            }
        });
    }

    /** Runs `work` on a pooled client; a failure of the database (not of `work`'s own checks) becomes a SharedRegisterError. */
    private async withClient<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
        let client: PoolClient;
        try {
            client = await this.pool.connect();
        } catch (error) {
            throw this.unreachable(error);
        }
        try {
            return await work(client);
        } catch (error) {
            throw isDatabaseError(error) ? this.unreachable(error) : error;
        } finally {
            client.release();
        }
    }

    private unreachable(error: unknown): SharedRegisterError {
        if (error instanceof SharedRegisterError) {
            return error;
        }
        const reason = error instanceof Error ? error.message : String(error);
        return new SharedRegisterError(`the shared register (${this.database}) cannot be used: ${reason}`);
    }
}

/** An error of the database or the connection, as opposed to one thrown by the caller's own checks. */
const isDatabaseError = (error: unknown): boolean => {
    if (!(error instanceof Error)) {
        return false;
    }
    const code = (error as { code?: unknown }).code;
    return (
        typeof code === "string" ||
        error instanceof SchemaTooNewError ||
        /connection|timeout|terminat/i.test(error.message)
    );
};
