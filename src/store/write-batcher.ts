import { SqliteDatabase } from "./database";

interface PendingWrite {
    work: () => unknown;
    resolve: (value: unknown) => void;
    reject: (error: unknown) => void;
}

/**
 * Group commit: writes that arrive in the same turn of the event loop share one transaction and so
 * one flush to disk. Each write runs in its own savepoint, so one failing write fails alone. A
 * promise settles only after its transaction committed and `durable` resolved (see wal-sync.ts,
 * which flushes off the node's thread): an answered write is on disk.
 */
export class WriteBatcher {
    private queue: PendingWrite[] = [];
    private scheduled = false;

    public constructor(
        private readonly db: SqliteDatabase,
        private readonly durable: () => Promise<void> = () => Promise.resolve(),
    ) {}

    public run<T>(work: () => T): Promise<T> {
        return new Promise<T>((resolve, reject) => {
            this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
            if (!this.scheduled) {
                this.scheduled = true;
                setImmediate(() => this.flush());
            }
        });
    }

    /** Runs whatever is queued now; used on shutdown so that no accepted write is dropped. */
    public flush(): void {
        this.scheduled = false;
        const batch = this.queue;
        this.queue = [];
        if (batch.length === 0) {
            return;
        }
        const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
        let rolledBackBy: unknown;
        try {
            this.db.transaction(() => {
                for (const { work } of batch) {
                    try {
                        outcomes.push({ ok: true, value: this.db.transaction(work)() });
                    } catch (error) {
                        if (!this.db.inTransaction) {
                            // SQLite rolled the whole transaction back (a full disk does): every write failed.
                            rolledBackBy = error;
                            return;
                        }
                        outcomes.push({ ok: false, error });
                    }
                }
            })();
        } catch (error) {
            batch.forEach(({ reject }) => reject(rolledBackBy ?? error));
            return;
        }
        const settle = (): void =>
            batch.forEach(({ resolve, reject }, index) => {
                const outcome = outcomes[index];
                if (outcome.ok) {
                    resolve(outcome.value);
                } else {
                    reject(outcome.error);
                }
            });
        // Committed but maybe not on disk: the writes are answered as failed, as a commit that
        // could not flush its log would have been.
        this.durable().then(settle, (error: unknown) => batch.forEach(({ reject }) => reject(error)));
    }
}
