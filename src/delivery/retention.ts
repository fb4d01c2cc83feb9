import { StorageHealth } from "../store/storage-health";

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/** Deletes finished deliveries (and their attempts) older than the retention, at start and hourly. */
export class Retention {
    private timer: NodeJS.Timeout | undefined;

    public constructor(
        /** This relay's file, or the outbox every relay shares (which answers later). */
        private readonly outbox: { purgeFinishedBefore(cutoff: number): number | Promise<number> },
        private readonly retentionDays: number,
        private readonly health: Pick<StorageHealth, "failed">,
        private readonly clock: () => number = Date.now,
    ) {}

    public start(): void {
        this.purge();
        this.timer = setInterval(() => this.purge(), HOUR_MS);
        this.timer.unref();
    }

    public stop(): void {
        clearInterval(this.timer);
        this.timer = undefined;
    }

    private purge(): void {
        try {
            const purged = this.outbox.purgeFinishedBefore(this.clock() - this.retentionDays * DAY_MS);
            if (purged instanceof Promise) {
                purged.catch((error: unknown) => this.health.failed("purge", error));
            }
        } catch (error) {
            this.health.failed("purge", error);
        }
    }
}
