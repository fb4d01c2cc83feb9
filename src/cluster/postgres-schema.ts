import { PoolClient } from "pg";

/** The plugin's own schema in the operator's database, beside whatever else lives there. */
export const SCHEMA = "core_wallet_webhooks";

/** Each entry moves the shared schema one version up; entries are never edited once released. */
export const POSTGRES_MIGRATIONS: readonly string[] = [
    `
    CREATE TABLE ${SCHEMA}.webhooks (
        seq BIGSERIAL PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        event TEXT NOT NULL,
        target TEXT NOT NULL,
        enabled BOOLEAN NOT NULL,
        conditions TEXT NOT NULL,
        match TEXT NOT NULL,
        token TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    );
    `,
    // Deliveries every relay forwards and any relay makes. A delivery's id is the unique key that
    // makes a chain event seen by several relays one delivery (see store/delivery-id.ts); a
    // relay delivering it holds it by a lease: lease_owner, and next_attempt_at as the lease's end.
    `
    CREATE TABLE ${SCHEMA}.deliveries (
        seq BIGSERIAL PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        webhook_id TEXT NOT NULL REFERENCES ${SCHEMA}.webhooks (id) ON DELETE CASCADE,
        event TEXT NOT NULL,
        body TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        next_attempt_at BIGINT,
        reason TEXT,
        lease_owner TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    );
    CREATE INDEX deliveries_pending ON ${SCHEMA}.deliveries (webhook_id, next_attempt_at) WHERE status = 'pending';
    CREATE INDEX deliveries_due ON ${SCHEMA}.deliveries (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX deliveries_of_webhook ON ${SCHEMA}.deliveries (webhook_id, seq);
    CREATE INDEX deliveries_finished ON ${SCHEMA}.deliveries (webhook_id, updated_at) WHERE status <> 'pending';
    CREATE TABLE ${SCHEMA}.attempts (
        delivery_id TEXT NOT NULL REFERENCES ${SCHEMA}.deliveries (id) ON DELETE CASCADE,
        number INTEGER NOT NULL,
        started_at BIGINT NOT NULL,
        duration_ms DOUBLE PRECISION NOT NULL,
        status_code INTEGER,
        error TEXT,
        response_excerpt TEXT,
        PRIMARY KEY (delivery_id, number)
    );
    `,
    // Who this register is: made once with the schema, so that a relay that followed it can tell
    // it from one created again after a DROP SCHEMA, a restore of another dump, or another database.
    `
    CREATE TABLE ${SCHEMA}.register_identity (id TEXT PRIMARY KEY, created_at BIGINT NOT NULL);
    INSERT INTO ${SCHEMA}.register_identity (id, created_at)
        VALUES (md5(random()::text || clock_timestamp()::text), (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
    `,
    // Each relay says it is alive under its name (storage.postgres.relayName), so that two relays
    // given one name (a copied configuration) are told: leases and bodies would not say which is which.
    `
    CREATE TABLE ${SCHEMA}.relays (name TEXT NOT NULL, run TEXT NOT NULL, seen_at BIGINT NOT NULL, PRIMARY KEY (name, run));
    `,
];

/** The shared schema is newer than this plugin: another relay runs a newer version. */
export class SchemaTooNewError extends Error {}

/**
 * Brings the shared schema to this plugin's version, under an advisory lock so that relays
 * starting together migrate it once; refuses a schema newer than the plugin.
 */
export const migratePostgres = async (client: PoolClient): Promise<void> => {
    await client.query("BEGIN");
    try {
        await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [SCHEMA]);
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
        await client.query(`CREATE TABLE IF NOT EXISTS ${SCHEMA}.schema_version (version INTEGER NOT NULL)`);
        const found = await client.query<{ version: number }>(`SELECT version FROM ${SCHEMA}.schema_version`);
        let version = found.rows[0]?.version ?? 0;
        if (found.rows.length === 0) {
            await client.query(`INSERT INTO ${SCHEMA}.schema_version (version) VALUES (0)`);
        }
        if (version > POSTGRES_MIGRATIONS.length) {
            throw new SchemaTooNewError(
                `the shared register's schema version ${version} is newer than this plugin's ${POSTGRES_MIGRATIONS.length}; upgrade the plugin`,
            );
        }
        for (; version < POSTGRES_MIGRATIONS.length; version++) {
            await client.query(POSTGRES_MIGRATIONS[version]);
            await client.query(`UPDATE ${SCHEMA}.schema_version SET version = $1`, [version + 1]);
        }
        await client.query("COMMIT");
    } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
    }
};
