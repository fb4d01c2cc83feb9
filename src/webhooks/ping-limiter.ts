const WINDOW_MS = 60_000;
// Past this many webhooks remembered, those with no ping in the window are swept out.
const SWEEP_ABOVE = 10_000;

/** Too many pings of one webhook: the API answers 429 with a Retry-After. */
export class PingLimitError extends Error {
    public constructor(
        public readonly webhookId: string,
        public readonly retryAfterSeconds: number,
        limit: number,
    ) {
        super(
            `webhook ${webhookId} was pinged ${limit} times in the last minute (limits.pingsPerMinute): try again in ${retryAfterSeconds} s`,
        );
    }
}

/**
 * At most `perMinute` pings of one webhook in any 60 s: each ping is a write and a delivery, and a
 * client pinging in a loop grew the SQLite WAL to 512 MB. One webhook's limit never touches another's.
 */
export class PingLimiter {
    private readonly recent = new Map<string, number[]>();

    public constructor(private readonly perMinute: number) {}

    /** Webhooks whose pings it keeps count of. */
    public get webhooksCounted(): number {
        return this.recent.size;
    }

    /** Counts a ping at `now`, or throws PingLimitError when the webhook had its share. */
    public take(webhookId: string, now: number): void {
        const times = (this.recent.get(webhookId) ?? []).filter((at) => now - at < WINDOW_MS);
        if (times.length >= this.perMinute) {
            this.recent.set(webhookId, times);
            throw new PingLimitError(
                webhookId,
                Math.max(1, Math.ceil((times[0] + WINDOW_MS - now) / 1000)),
                this.perMinute,
            );
        }
        times.push(now);
        this.recent.set(webhookId, times);
        if (this.recent.size > SWEEP_ABOVE) {
            this.sweep(now);
        }
    }

    private sweep(now: number): void {
        for (const [webhookId, times] of this.recent) {
            if (times.every((at) => now - at >= WINDOW_MS)) {
                this.recent.delete(webhookId);
            }
        }
    }
}
