import BetterSqlite3 from "better-sqlite3";
import { closeSync, existsSync, mkdirSync, openSync, statfsSync, statSync } from "fs";
import { dirname } from "path";

import { MIGRATIONS } from "./migrations";
import { errorCodeOf } from "./storage-health";

export type SqliteDatabase = BetterSqlite3.Database;

/** The register and the outbox share one file but not one durability level. */
export interface StoreConnections {
    /** Webhook writes: each batch's log flushed before it is answered (see wal-sync.ts). */
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

/**
 * The WAL's size once a checkpoint lets a writer start it again from its beginning. SQLite reuses a
 * WAL but never shrinks it: one burst that outran the checkpoints (60,000 pings: 512 MB beside a
 * 22 MB database) kept its size until the next start.
 */
export const WAL_SIZE_LIMIT_BYTES = 32 * 1024 * 1024;

const applyPragmas = (db: SqliteDatabase): void => {
    db.pragma("journal_mode = WAL");
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    // Commits write the log without flushing it: durable across a process crash. The register's
    // writes are flushed before they are answered, off the node's thread (wal-sync.ts).
    db.pragma("synchronous = NORMAL");
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

const openConnection = (file: string): SqliteDatabase => {
    const db = new BetterSqlite3(file);
    try {
        applyPragmas(db);
        return db;
    } catch (error) {
        db.close();
        throw error;
    }
};

const OWNER_ONLY_FOLDER = 0o700;
// 256 pages of 4 KiB: 1 MiB of log.
const ENGINE_CHECKPOINT_PAGES = 256;
const OWNER_ONLY_FILE = 0o600;

/**
 * Creates the folder and the file owner-only (the file holds every token), or checks the file
 * found: an empty one is refused unless its WAL holds its content, since an empty file where a
 * register should be means something went wrong, not a fresh start.
 */
// The kernel's own file systems (statfs f_type): they show the kernel's state as files and hold
// none of ours; SQLite's locks and writes there fail, or hang (/proc/<pid>/fd/0 waits on a terminal).
const KERNEL_FILE_SYSTEMS = new Map<number, string>([
    [0x9fa0, "proc"],
    [0x62656572, "sysfs"],
    [0x1cd1, "devpts"],
    [0x27e0eb, "cgroup"],
    [0x63677270, "cgroup2"],
    [0x64626720, "debugfs"],
    [0x74726163, "tracefs"],
    [0x73636673, "securityfs"],
    [0xcafe4a11, "bpf"],
    [0x6165676c, "pstore"],
    [0x62656570, "configfs"],
    [0x65735543, "fusectl"],
    [0x42494e4d, "binfmt_misc"],
    [0xde5e81e4, "efivarfs"],
    [0x19800202, "mqueue"],
    [0x6e736673, "nsfs"],
]);

/** Refuses a path on one of the kernel's own file systems before anything is created or opened there. */
const assertOnAFileSystemForFiles = (file: string): void => {
    let folder = dirname(file);
    while (!existsSync(folder) && dirname(folder) !== folder) {
        folder = dirname(folder);
    }
    const kind = KERNEL_FILE_SYSTEMS.get(statfsSync(folder).type);
    if (kind !== undefined) {
        throw new StoreOpenError(
            file,
            `${folder} is on ${kind}, a file system of the kernel's that holds no files: set storage.path to a file on a disk`,
        );
    }
};

const prepareFile = (file: string): void => {
    assertOnAFileSystemForFiles(file);
    mkdirSync(dirname(file), { recursive: true, mode: OWNER_ONLY_FOLDER });
    try {
        closeSync(openSync(file, "wx", OWNER_ONLY_FILE));
        return;
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
            throw error;
        }
    }
    const walFile = `${file}-wal`;
    if (statSync(file).size === 0 && !(existsSync(walFile) && statSync(walFile).size > 0)) {
        throw new StoreOpenError(
            file,
            "it is empty (0 bytes), so it holds no register; to start afresh, delete it (and any -wal and -shm files beside it) and start again",
        );
    }
};

export const openStore = (file: string): StoreConnections => {
    let register: SqliteDatabase | undefined;
    let outbox: SqliteDatabase | undefined;
    try {
        prepareFile(file);
        register = openConnection(file);
        const integrity = register.pragma("quick_check", { simple: true });
        if (integrity !== "ok") {
            throw new StoreOpenError(file, `the integrity check failed (${String(integrity)})`);
        }
        migrate(register, file);
        // A file that opens but refuses writes stops the start here, named, not at the first write.
        register.pragma(`user_version = ${MIGRATIONS.length}`);
        outbox = openConnection(file);
    } catch (error) {
        outbox?.close();
        register?.close();
        if (error instanceof StoreOpenError) {
            throw error;
        }
        throw new StoreOpenError(file, describeOpenError(error));
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

/**
 * A connection of the delivery engine's own (a thread of its own needs one): the file was opened,
 * checked and migrated by openStore() on the node's thread before the engine starts.
 */
export const openEngineConnection = (file: string): SqliteDatabase => {
    const db = openConnection(file);
    // The engine writes most of the log, in bursts: it checkpoints itself past a small log (on its
    // own thread), so the log never outgrows what a checkpoint can take. Left to the checkpoint
    // thread's pace alone, a burst after a full disk was freed grew the log into all the space
    // freed, and then no checkpoint, which needs room to grow the database file, could run again.
    db.pragma(`wal_autocheckpoint = ${ENGINE_CHECKPOINT_PAGES}`);
    return db;
};

const describeOpenError = (error: unknown): string => {
    const message = error instanceof Error ? error.message : String(error);
    const code = errorCodeOf(error);
    if (code?.startsWith("SQLITE_READONLY")) {
        return `${message}: the plugin needs to write it and the folder it is in (check their owner and mode)`;
    }
    return code ? `${message} (${code})` : message;
};
