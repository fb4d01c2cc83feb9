import { StorageState } from "../contracts";
import { ThrottledLog } from "../logging/throttled-log";

// Result codes that say the file, not the statement, is at fault; SQLite's extended codes share a prefix.
const STORAGE_CODES = [
    "SQLITE_FULL",
    "SQLITE_IOERR",
    "SQLITE_READONLY",
    "SQLITE_CANTOPEN",
    "SQLITE_BUSY",
    "SQLITE_CORRUPT",
    "SQLITE_NOTADB",
    "SQLITE_PROTOCOL",
    // The journal's files (src/store/journal-writer.ts): the system's error codes of a write.
    "ENOSPC",
    "EDQUOT",
    "EFBIG",
    "EIO",
    "EROFS",
    "EACCES",
    "EPERM",
    "ENOENT",
];

/** An error's code (SQLite's or the system's), read by shape: a native module's errors may come from another realm. */
export const errorCodeOf = (error: unknown): string | undefined => {
    const code = (error as { code?: unknown } | null)?.code;
    return typeof code === "string" ? code : undefined;
};

/** Whether an error comes from the database file (full, read-only, failing), not from a bad statement. */
export const isStorageError = (error: unknown): boolean => {
    const code = errorCodeOf(error);
    return code !== undefined && STORAGE_CODES.some((prefix) => code === prefix || code.startsWith(`${prefix}_`));
};

const describe = (error: unknown): string => {
    // Read the message by shape: errors thrown by a native module may come from another realm.
    const message = (error as { message?: unknown } | null)?.message;
    const text = typeof message === "string" ? message : String(error);
    const code = errorCodeOf(error);
    return code ? `${text} (${code})` : text;
};

export interface HealthLogger {
    warning(message: string): void;
    info(message: string): void;
}

/**
 * Parts that hold what they could not write (the journal's spool, the dispatcher's outcomes) stay
 * failed until they write it; a part that only reports (a request, the retention purge) is cleared
 * by any write that goes through.
 */
export type StoragePart = "journal" | "outcomes" | "deliveries" | "request" | "purge" | "group" | "file";
// A group's file that cannot be read stays a failure until the engine passes its segment; a database
// file deleted or replaced while in use, until the restart that must follow.
const HOLDING_PARTS: ReadonlySet<StoragePart> = new Set(["journal", "outcomes", "group", "file"]);
const PART_LABELS: Record<StoragePart, string> = {
    journal: "the journal (events wait in the spool)",
    outcomes: "attempt outcomes (nothing is sent until they are written)",
    deliveries: "new deliveries (events wait in the journal)",
    request: "an API request",
    purge: "the retention purge",
    file: "every write (they go to a file no longer in its place: restore it and restart)",
    group: "a deferred group of the journal (its events are not delivered to the webhooks it listed; every other delivery goes on)",
};

/**
 * Whether the database file accepts writes. Every part that writes reports here; the API reads it
 * to answer 503 naming the file and the cause, and failures are logged once per interval.
 */
export class StorageHealth {
    private readonly failing = new Map<StoragePart, string>();
    private cause: string | null = null;
    private since: number | null = null;
    /** The current incident's "degraded" line was printed, so its recovery is too. */
    private incidentLogged = false;
    private readonly log: ThrottledLog;

    public constructor(
        public readonly file: string,
        private readonly logger: HealthLogger,
        private readonly clock: () => number = Date.now,
    ) {
        this.log = new ThrottledLog((message) => logger.warning(message), clock);
    }

    public get degraded(): boolean {
        return this.failing.size > 0;
    }

    public snapshot(): StorageState {
        return this.degraded
            ? { state: "degraded", file: this.file, cause: this.cause, since: this.since }
            : { state: "ok", file: this.file, cause: null, since: null };
    }

    /** Records a failed write of a part; returns the message that names the file and the cause. */
    public failed(part: StoragePart, error: unknown): string {
        const cause = describe(error);
        if (!this.degraded) {
            this.since = this.clock();
        }
        this.failing.set(part, cause);
        this.cause = cause;
        const message = `storage degraded: ${this.file}: ${cause}`;
        if (this.log.write("storage", `${message}, writing ${PART_LABELS[part]}`)) {
            this.incidentLogged = true;
        }
        return message;
    }

    /** Records a write of a part that went through. */
    public succeeded(part: StoragePart): void {
        if (!this.degraded) {
            return;
        }
        this.failing.delete(part);
        for (const failed of [...this.failing.keys()]) {
            if (!HOLDING_PARTS.has(failed)) {
                this.failing.delete(failed);
            }
        }
        if (this.degraded) {
            return;
        }
        const since = this.since ?? this.clock();
        this.cause = null;
        this.since = null;
        // A file that flaps (a nearly full disk takes a write now and then) is not logged on every
        // flap: degradations stay throttled across recoveries (counted on the next line), and a
        // recovery is logged when its degradation was.
        if (this.incidentLogged) {
            this.incidentLogged = false;
            this.logger.info(`storage recovered: ${this.file} accepts writes again after ${this.clock() - since} ms`);
        }
    }
}
