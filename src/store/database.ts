import BetterSqlite3 from "better-sqlite3";
import { mkdirSync } from "fs";
import { dirname } from "path";

import { MIGRATIONS } from "./migrations";

export type SqliteDatabase = BetterSqlite3.Database;

/** The register and the outbox share one file but not one durability level. */
export interface StoreConnections {
    /** Webhook writes: fsync on every commit (synchronous = FULL). */
    register: SqliteDatabase;
    /** Outbox writes on the listener's path: durable across a process crash, no fsync per event. */
    outbox: SqliteDatabase;
    close(): void;
}

export class StoreOpenError extends Error {
    public constructor(
        public readonly file: string,
        reason: string,
    ) {
        super(`core-wallet-webhooks cannot use its database file ${file}: ${reason}`);
        this.name = "StoreOpenError";
    }
}

const applyPragmas = (db: SqliteDatabase, synchronous: "FULL" | "NORMAL"): void => {
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${synchronous}`);
    db.pragma("foreign_keys = ON");
    db.pragma("busy_timeout = 5000");
    // The Checkpointer's worker thread checkpoints; see resumeAutoCheckpoints() for when it cannot.
    db.pragma("wal_autocheckpoint = 0");
};

/** SQLite's own checkpointing on every commit past 1,000 WAL pages: the fallback without the worker. */
export const resumeAutoCheckpoints = (connections: StoreConnections): void => {
    connections.register.pragma("wal_autocheckpoint = 1000");
    connections.outbox.pragma("wal_autocheckpoint = 1000");
};

const migrate = (db: SqliteDatabase, file: string): void => {
    const current = db.pragma("user_version", { simple: true }) as number;
    if (current > MIGRATIONS.length) {
        throw new StoreOpenError(
            file,
            `its schema version ${current} is newer than this plugin's ${MIGRATIONS.length}; upgrade the plugin`,
        );
    }
    for (let version = current; version < MIGRATIONS.length; version++) {
        db.transaction(() => {
            db.exec(MIGRATIONS[version]);
            db.pragma(`user_version = ${version + 1}`);
        })();
    }
};

const openConnection = (file: string, synchronous: "FULL" | "NORMAL"): SqliteDatabase => {
    const db = new BetterSqlite3(file);
    try {
        applyPragmas(db, synchronous);
        return db;
    } catch (error) {
        db.close();
        throw error;
    }
};

export const openStore = (file: string): StoreConnections => {
    let register: SqliteDatabase | undefined;
    let outbox: SqliteDatabase | undefined;
    try {
        mkdirSync(dirname(file), { recursive: true });
        register = openConnection(file, "FULL");
        const integrity = register.pragma("quick_check", { simple: true });
        if (integrity !== "ok") {
            throw new StoreOpenError(file, `the integrity check failed (${String(integrity)})`);
        }
        migrate(register, file);
        outbox = openConnection(file, "NORMAL");
    } catch (error) {
        outbox?.close();
        register?.close();
        if (error instanceof StoreOpenError) {
            throw error;
        }
        throw new StoreOpenError(file, error instanceof Error ? error.message : String(error));
    }
    const connections = { register, outbox };
    return {
        ...connections,
        close: () => {
            connections.outbox.close();
            connections.register.close();
        },
    };
};
