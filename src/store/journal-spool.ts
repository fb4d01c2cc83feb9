import { SpoolStats } from "../contracts";
import { ThrottledLog } from "../logging/throttled-log";
import { JournaledEvent } from "./journal-entry";
import { JournalWriter } from "./journal-writer";
import { isStorageError, StorageHealth } from "./storage-health";

export interface SpoolOptions {
    /** Bytes of journaled events held in memory while the file refuses writes; past it, events are dropped and counted. */
    maxBytes: number;
    /** How often a held spool tries the file again. */
    retryMs: number;
}

export interface SpoolDependencies {
    journal: Pick<JournalWriter, "append">;
    health: StorageHealth;
    /** Called when events reached the journal: the engine finds there what they owe. */
    onWritten: () => void;
    logError: (message: string) => void;
}

// Room for the delivery ids of an event beside its body.
const BYTES_PER_DELIVERY = 80;

const sizeOf = (event: JournaledEvent): number =>
    event.body.length * 2 + (event.deliveries.length + event.deferred.length) * BYTES_PER_DELIVERY;

/**
 * The listener's way into the journal. While its files accept writes it writes straight through;
 * when they do not (disk full, I/O error, read-only), events wait here, in order and within a
 * bound, and are written as soon as the files accept writes again. Nothing is dropped silently:
 * past the bound each dropped event is counted, logged (throttled) and shown by `GET /api`.
 */
export class JournalSpool {
    private queue: JournaledEvent[] = [];
    private bytes = 0;
    private dropped = 0;
    private timer: NodeJS.Timeout | undefined;
    private readonly log: ThrottledLog;

    public constructor(
        private readonly options: SpoolOptions,
        private readonly dependencies: SpoolDependencies,
    ) {
        this.log = new ThrottledLog(dependencies.logError);
    }

    public append(event: JournaledEvent): void {
        // Once anything waits, later events wait behind it: the journal keeps the node's order.
        if (this.queue.length === 0) {
            try {
                this.dependencies.journal.append(event);
                this.dependencies.health.succeeded("journal");
                this.dependencies.onWritten();
                return;
            } catch (error) {
                if (!isStorageError(error)) {
                    this.drop(event, `could not be written: ${String(error)}`);
                    return;
                }
                this.dependencies.health.failed("journal", error);
            }
        }
        this.hold(event);
    }

    public stats(): SpoolStats {
        return { events: this.queue.length, bytes: this.bytes, maxBytes: this.options.maxBytes, dropped: this.dropped };
    }

    /** Tries to write what is held; true when nothing is left. */
    public flush(): boolean {
        if (this.queue.length === 0) {
            return true;
        }
        // One by one, in order: each written event leaves the queue, so none is written twice.
        let written = 0;
        try {
            for (const event of this.queue) {
                this.dependencies.journal.append(event);
                this.bytes -= sizeOf(event);
                written++;
            }
        } catch (error) {
            this.dependencies.health.failed("journal", error);
            this.schedule();
            return false;
        } finally {
            this.queue = this.queue.slice(written);
            if (written > 0) {
                this.dependencies.onWritten();
            }
        }
        this.bytes = 0;
        clearTimeout(this.timer);
        this.timer = undefined;
        this.dependencies.health.succeeded("journal");
        return true;
    }

    /** A last try at the file; whatever it still refuses is lost with the process, and said so. */
    public stop(): void {
        clearTimeout(this.timer);
        this.timer = undefined;
        if (!this.flush()) {
            clearTimeout(this.timer);
            this.timer = undefined;
            this.dependencies.logError(
                `${this.queue.length} journaled events were never written to ${this.dependencies.health.file} and are lost at shutdown`,
            );
        }
    }

    private hold(event: JournaledEvent): void {
        const size = sizeOf(event);
        if (this.bytes + size > this.options.maxBytes) {
            this.drop(event, `exceeds the spool bound (storage.spoolMaxBytes = ${this.options.maxBytes})`);
            return;
        }
        this.queue.push(event);
        this.bytes += size;
        this.schedule();
    }

    private drop(event: JournaledEvent, reason: string): void {
        this.dropped++;
        this.log.write(
            "dropped",
            `dropped the deliveries of a ${event.event} event: it ${reason}; ${this.dropped} events dropped since start`,
        );
    }

    private schedule(): void {
        if (this.timer) {
            return;
        }
        this.timer = setTimeout(() => {
            this.timer = undefined;
            this.flush();
        }, this.options.retryMs);
    }
}
