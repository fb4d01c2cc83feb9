import { ThrottledLog } from "../logging/throttled-log";

// SQLite result codes that say the file, not the statement, is at fault; extended codes share a prefix.
const STORAGE_CODES = [
    "SQLITE_FULL",
    "SQLITE_IOERR",
    "SQLITE_READONLY",
    "SQLITE_CANTOPEN",
    "SQLITE_BUSY",
    "SQLITE_CORRUPT",
    "SQLITE_NOTADB",
    "SQLITE_PROTOCOL",
];

const codeOf = (error: unknown): string | undefined => {
    const code = (error as { code?: unknown } | null)?.code;
    return typeof code === "string" ? code : undefined;
};

/** Whether an error comes from the database file (full, read-only, failing), not from a bad statement. */
export const isStorageError = (error: unknown): boolean => {
    const code = codeOf(error);
    return code !== undefined && STORAGE_CODES.some((prefix) => code === prefix || code.startsWith(`${prefix}_`));
};

const describe = (error: unknown): string => {
    const message = error instanceof Error ? error.message : String(error);
    const code = codeOf(error);
    return code ? `${message} (${code})` : message;
};

export interface StorageState {
    state: "ok" | "degraded";
    file: string;
    /** What failed last, while degraded. */
    cause: string | null;
    since: number | null;
}

export interface HealthLogger {
    warning(message: string): void;
    info(message: string): void;
}

/**
 * Whether the database file accepts writes. Every part that writes reports here; the API reads it
 * to answer 503 naming the file and the cause, and failures are logged once per interval.
 */
export class StorageHealth {
    private current: StorageState;
    private readonly log: ThrottledLog;

    public constructor(
        public readonly file: string,
        private readonly logger: HealthLogger,
        private readonly clock: () => number = Date.now,
    ) {
        this.current = { state: "ok", file, cause: null, since: null };
        this.log = new ThrottledLog((message) => logger.warning(message), clock);
    }

    public get degraded(): boolean {
        return this.current.state === "degraded";
    }

    public snapshot(): StorageState {
        return { ...this.current };
    }

    /** Records a failed write; returns the message that names the file and the cause. */
    public failed(operation: string, error: unknown): string {
        const cause = describe(error);
        if (!this.degraded) {
            this.current = { state: "degraded", file: this.file, cause, since: this.clock() };
        } else {
            this.current.cause = cause;
        }
        const message = `storage degraded: ${this.file}: ${cause}`;
        this.log.write("storage", `${message}; ${operation} is held until the file accepts writes again`);
        return message;
    }

    /** Records a write that went through: a degraded store is healthy again. */
    public succeeded(): void {
        if (!this.degraded) {
            return;
        }
        const since = this.current.since ?? this.clock();
        this.current = { state: "ok", file: this.file, cause: null, since: null };
        this.log.reset("storage");
        this.logger.info(`storage recovered: ${this.file} accepts writes again after ${this.clock() - since} ms`);
    }
}
