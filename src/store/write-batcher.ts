import { SqliteDatabase } from "./database";

interface PendingWrite {
    work: () => unknown;
    /** Answered once on disk; otherwise once committed (a copy of what is durable elsewhere). */
    durable: boolean;
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

    /**
     * Runs `work` in the next batch. `durable: false` settles once committed, without waiting for
     * the flush: for a copy of what is durable elsewhere (the shared register), which readers of
     * the file must not see ahead of the rest of the plugin.
     */
    public run<T>(work: () => T, { durable = true }: { durable?: boolean } = {}): Promise<T> {
        return new Promise<T>((resolve, reject) => {
            this.queue.push({ work, durable, resolve: resolve as (value: unknown) => void, reject });
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
        const settle = (durable: boolean): void =>
            batch.forEach((write, index) => {
                if (write.durable !== durable) {
                    return;
                }
                const outcome = outcomes[index];
                if (outcome.ok) {
                    write.resolve(outcome.value);
                } else {
                    write.reject(outcome.error);
                }
            });
        settle(false);
        if (batch.some(({ durable }) => durable)) {
            // Committed but maybe not on disk: the writes are answered as failed, as a commit that
            // could not flush its log would have been.
            this.durable().then(
                () => settle(true),
                (error: unknown) => batch.filter(({ durable }) => durable).forEach(({ reject }) => reject(error)),
            );
        }
    }
}
