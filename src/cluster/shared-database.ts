import { Pool, PoolClient, PoolConfig } from "pg";

import { errorCodeOf } from "../store/storage-health";
import { SharedRegisterError } from "../webhooks/shared-register";
import { migratePostgres, SchemaTooNewError } from "./postgres-schema";

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

// undefined_table, invalid_schema_name: the schema was dropped since this run migrated it.
const SCHEMA_GONE_CODES = new Set(["42P01", "3F000"]);

/** An error of the database or the connection, as opposed to one thrown by the caller's own checks. */
const isDatabaseError = (error: unknown): boolean => {
    if (!(error instanceof Error)) {
        return false;
    }
    return (
        errorCodeOf(error) !== undefined ||
        error instanceof SchemaTooNewError ||
        /connection|timeout|terminat/i.test(error.message)
    );
};

/**
 * A pool on the PostgreSQL every relay shares, migrated once per run before its first query. A
 * failure of the database becomes a SharedRegisterError whose message names it (never its password).
 */
export class SharedDatabase {
    private readonly pool: Pool;
    private migrated: Promise<void> | undefined;
    public readonly description: string;

    public constructor(options: PostgresOptions) {
        this.description = describeDatabase(options.url);
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

    /** Migrated first, then a client: one held while the migration waits for another would starve the pool. */
    public async read<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
        await this.migrate();
        return this.withClient(work);
    }

    public transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
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

    public async close(): Promise<void> {
        await this.pool.end();
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
            if (SCHEMA_GONE_CODES.has(errorCodeOf(error) ?? "")) {
                // Migrated again before the next read: a register created anew is then met as such.
                this.migrated = undefined;
            }
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
        return new SharedRegisterError(`the shared register (${this.description}) cannot be used: ${reason}`);
    }
}
