const LOG_INTERVAL_MS = 60_000;

interface Topic {
    loggedAt: number;
    suppressed: number;
}

/**
 * Logs a recurring failure once, then at most once per interval with the number of repeats left
 * out, so that a failure met on every event never floods the node's log.
 */
export class ThrottledLog {
    private readonly topics = new Map<string, Topic>();

    public constructor(
        private readonly sink: (message: string) => void,
        private readonly clock: () => number = Date.now,
        private readonly intervalMs: number = LOG_INTERVAL_MS,
    ) {}

    /** Logs the message unless its topic was logged within the interval; true when it did. */
    public write(topic: string, message: string): boolean {
        const now = this.clock();
        const seen = this.topics.get(topic);
        if (seen && now - seen.loggedAt < this.intervalMs) {
            seen.suppressed++;
            return false;
        }
        const repeats = seen && seen.suppressed > 0 ? ` (and ${seen.suppressed} more like it since the last line)` : "";
        this.sink(`${message}${repeats}`);
        this.topics.set(topic, { loggedAt: now, suppressed: 0 });
        return true;
    }

    /** Forgets a topic, so that its next failure is logged at once. */
    public reset(topic: string): void {
        this.topics.delete(topic);
    }
}
