import { boundedMemo } from "./bounded-memo";
import { isStorageError, StorageHealth, StoragePart } from "../store/storage-health";

// The time one turn of the event loop may spend turning journaled events into deliveries, and the
// rest after a turn that did not finish: a quarter of a loop at most. In the engine's own thread
// too: longer turns did not speed up a burst on two cores, and took the core from the node's loop.
export const EXPANSION_SLICE_MS = 3;
export const EXPANSION_REST_MS = 9;
export const GONE_REASON = "the receiver answered 410 Gone";

/** The wait after the n-th failure in a row of the same thing: 1 s, doubling, at most `maxMs`. */
export const failureBackoffMs = (failures: number, maxMs: number): number =>
    Math.min(1000 * 2 ** Math.max(0, failures - 1), maxMs);
const WEBHOOK_BACKOFF_MAX_MS = 60_000;

/** The origin a target's attempts are counted under; the target itself when it is not a URL. */
export const targetKey = boundedMemo((target: string): string => {
    try {
        return new URL(target).origin;
    } catch {
        return target;
    }
}, 1024);

/**
 * Webhooks whose last attempts failed inside the plugin, held back with a growing delay. Attempts
 * that were under way together fail together: one incident, one step of the delay (counted one by
 * one, 16 attempts at once held a webhook for a minute after a full disk).
 */
export class WebhookBackoff {
    private readonly held = new Map<string, { until: number; failures: number }>();

    public failed(webhookId: string, now: number): void {
        const held = this.held.get(webhookId);
        if (!held || held.until <= now) {
            const failures = (held?.failures ?? 0) + 1;
            this.held.set(webhookId, { until: now + failureBackoffMs(failures, WEBHOOK_BACKOFF_MAX_MS), failures });
        }
    }

    public succeeded(webhookId: string): void {
        this.held.delete(webhookId);
    }

    /** Until when the webhook is held back; 0 when it is not. */
    public until(webhookId: string): number {
        return this.held.get(webhookId)?.until ?? 0;
    }

    public ends(): IterableIterator<{ until: number }> {
        return this.held.values();
    }
}

/** Tells a failure to storage health when it is the file's, to `onError` otherwise; never throws. */
export const reportFailure = (
    error: unknown,
    part: StoragePart,
    health: Pick<StorageHealth, "failed">,
    onError: (error: unknown) => void,
): void => {
    try {
        if (isStorageError(error)) {
            health.failed(part, error);
        } else {
            onError(error);
        }
    } catch {
        // A failing logger must not turn into a failing dispatcher.
    }
};
