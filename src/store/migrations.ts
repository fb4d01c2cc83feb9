/** Each entry moves the schema one `user_version` up; entries are never edited once released. */
export const MIGRATIONS: readonly string[] = [
    `
    CREATE TABLE webhooks (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        event TEXT NOT NULL,
        target TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        conditions TEXT NOT NULL,
        match TEXT NOT NULL,
        token TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );

    CREATE TABLE deliveries (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        webhook_id TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        event TEXT NOT NULL,
        body TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        next_attempt_at INTEGER,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX deliveries_by_webhook ON deliveries (webhook_id, seq);
    CREATE INDEX deliveries_by_update ON deliveries (updated_at) WHERE status <> 'pending';

    CREATE TABLE attempts (
        delivery_id TEXT NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
        number INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        duration_ms INTEGER NOT NULL,
        status_code INTEGER,
        error TEXT,
        response_excerpt TEXT,
        PRIMARY KEY (delivery_id, number)
    );

    CREATE TABLE imports (
        source TEXT PRIMARY KEY,
        imported_at INTEGER NOT NULL,
        count INTEGER NOT NULL
    );
    `,
    // The listener's journal: one row per event, expanded into deliveries off the listener's path.
    `
    CREATE TABLE event_journal (
        seq INTEGER PRIMARY KEY,
        event TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        deliveries TEXT NOT NULL
    );
    `,
    // Each webhook's own queue of due deliveries, which the dispatcher reads webhook by webhook.
    `
    CREATE INDEX deliveries_due_by_webhook ON deliveries (webhook_id, next_attempt_at) WHERE status = 'pending';
    `,
    // Webhooks the listener had no time to test (its matching budget), and why a delivery was cancelled.
    `
    ALTER TABLE event_journal ADD COLUMN deferred TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE deliveries ADD COLUMN reason TEXT;
    `,
    // Dead deliveries counted for the metrics without reading every finished one.
    `
    CREATE INDEX deliveries_dead ON deliveries (webhook_id) WHERE status = 'dead';
    `,
    // The journal moved to files of its own (src/store/journal-segments.ts); the engine's place in them.
    `
    CREATE TABLE journal_cursor (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        segment INTEGER NOT NULL,
        offset INTEGER NOT NULL
    );
    INSERT INTO journal_cursor (id, segment, offset) VALUES (1, 0, 0);
    `,
    // An event owed to several webhooks keeps its body once (body_seq), not once a delivery; the
    // body goes with the last delivery that refers to it, whatever deletes it (a purge, a webhook
    // deleted, a delivery moved to the shared outbox). Deliveries with body_seq NULL keep their own.
    `
    CREATE TABLE delivery_bodies (
        seq INTEGER PRIMARY KEY,
        body TEXT NOT NULL,
        refs INTEGER NOT NULL
    );
    ALTER TABLE deliveries ADD COLUMN body_seq INTEGER;
    CREATE TRIGGER deliveries_release_body AFTER DELETE ON deliveries WHEN OLD.body_seq IS NOT NULL
    BEGIN
        UPDATE delivery_bodies SET refs = refs - 1 WHERE seq = OLD.body_seq;
        DELETE FROM delivery_bodies WHERE seq = OLD.body_seq AND refs <= 0;
    END;
    `,
    // Attempts in one b-tree keyed by their delivery's seq, which grows with time, instead of a
    // table and an index on the delivery's id: one insert an attempt instead of two, its delivery
    // found by rowid, and with the shared register's ids (a chain event's, random) no random page
    // of that index to write to the log at each commit.
    `
    CREATE TABLE attempts_by_seq (
        delivery_seq INTEGER NOT NULL REFERENCES deliveries (seq) ON DELETE CASCADE,
        number INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        duration_ms INTEGER NOT NULL,
        status_code INTEGER,
        error TEXT,
        response_excerpt TEXT,
        PRIMARY KEY (delivery_seq, number)
    ) WITHOUT ROWID;
    INSERT INTO attempts_by_seq (delivery_seq, number, started_at, duration_ms, status_code, error, response_excerpt)
        SELECT d.seq, a.number, a.started_at, a.duration_ms, a.status_code, a.error, a.response_excerpt
        FROM attempts a JOIN deliveries d ON d.id = a.delivery_id;
    DROP TABLE attempts;
    ALTER TABLE attempts_by_seq RENAME TO attempts;
    `,
    // A Retry-After pause of a receiver's origin, kept across a restart (see store/origin-pauses.ts).
    `
    CREATE TABLE origin_pauses (
        origin TEXT PRIMARY KEY,
        until INTEGER NOT NULL
    );
    `,
    // The journal table above served versions never published: its rows were read until the
    // journal moved to files (migration 7), and nothing has written it since.
    `
    DROP TABLE event_journal;
    `,
];
