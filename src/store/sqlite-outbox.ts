import { Delivery } from "../contracts";
import { AttemptOutcome, DeliveryStore } from "./delivery-store";
import { Claim, Expansion, Outbox } from "./outbox";

export type SqliteOutboxStore = Pick<
    DeliveryStore,
    | "pendingWebhookIds"
    | "nextDueOf"
    | "dueOf"
    | "nextDueOfAfter"
    | "nextDueAfter"
    | "recordAll"
    | "cancelPending"
    | "deadStreak"
>;

// Due deliveries of a webhook read at once and handed out from memory: one query for this many
// attempts, where reading past the ones in flight cost a query of some 65 rows an attempt.
const READ_AHEAD = 256;

/**
 * The outbox in this relay's own file (storage.driver "sqlite"). Only this relay's dispatcher
 * delivers from it, so a claim is a note in memory: a claimed delivery stays pending in the file
 * until its outcome is written, and is not handed out again meanwhile. A restart resumes from what
 * was written: an attempt whose outcome was not written is made again, with the same id.
 */
export class SqliteOutbox implements Outbox {
    public readonly lookEveryMs = undefined;
    /** Claimed deliveries, by id, and their webhook's id. */
    private readonly claimed = new Map<string, string>();
    private readonly claimedPerWebhook = new Map<string, number>();
    /**
     * Each webhook's due deliveries read ahead, in due order, none claimed. Only this relay attempts
     * them, so they stay due; one made due by the API meanwhile is read with the next batch.
     */
    private readonly readAhead = new Map<string, { deliveries: Delivery[]; next: number }>();
    /**
     * Webhooks whose read-ahead held every delivery due when it was read, and the time until which
     * no other of their rows falls due (their next retry): while it holds, the deliveries the
     * journal gives them join the read-ahead from memory instead of being read back from the file.
     * Anything else that makes a delivery due (a redelivery, a ping, a webhook enabled again, a
     * retry written, a claim released) ends it.
     */
    private readonly allDueReadUntil = new Map<string, number>();

    public constructor(
        private readonly store: SqliteOutboxStore,
        private readonly checkpoint: () => void = () => undefined,
    ) {}

    public async webhooksWithWork(): Promise<string[]> {
        return this.store.pendingWebhookIds();
    }

    public async takeIn(expansion: Expansion, now: number): Promise<{ webhookIds: string[]; done: boolean }> {
        for (const delivery of expansion.deliveries) {
            const until = this.allDueReadUntil.get(delivery.webhookId);
            if (until === undefined) {
                continue;
            }
            const batch = this.readAhead.get(delivery.webhookId);
            if (now >= until || (batch && batch.deliveries.length - batch.next >= READ_AHEAD)) {
                // A retry fell due, or the receiver lags: the file has the rest, in due order.
                this.allDueReadUntil.delete(delivery.webhookId);
                continue;
            }
            if (batch) {
                batch.deliveries.push(delivery);
            } else {
                this.readAhead.set(delivery.webhookId, { deliveries: [delivery], next: 0 });
            }
        }
        return { webhookIds: [...expansion.webhookIds], done: true };
    }

    public async claim(webhookId: string, now: number, limit: number): Promise<Claim> {
        const until = this.allDueReadUntil.get(webhookId);
        if (until !== undefined && now >= until) {
            this.allDueReadUntil.delete(webhookId);
        }
        const deliveries: Delivery[] = [];
        while (deliveries.length < limit) {
            let batch = this.readAhead.get(webhookId);
            if (!batch) {
                if (this.allDueReadUntil.has(webhookId)) {
                    break;
                }
                batch = this.readDue(webhookId, now);
                if (batch.deliveries.length === 0) {
                    break;
                }
                this.readAhead.set(webhookId, batch);
            }
            const taken = batch.deliveries.slice(batch.next, batch.next + limit - deliveries.length);
            batch.next += taken.length;
            if (batch.next >= batch.deliveries.length) {
                this.readAhead.delete(webhookId);
            }
            for (const delivery of taken) {
                this.claimed.set(delivery.id, webhookId);
                this.claimedPerWebhook.set(webhookId, (this.claimedPerWebhook.get(webhookId) ?? 0) + 1);
                deliveries.push(delivery);
            }
        }
        return deliveries.length > 0 ? { deliveries } : { deliveries, idleUntil: this.idleUntil(webhookId, now) };
    }

    /** The webhook's first due rows that are not claimed; a short read means none other is due before its next retry. */
    private readDue(webhookId: string, now: number): { deliveries: Delivery[]; next: number } {
        // Its claimed deliveries are among its first due rows: read past them.
        const limit = READ_AHEAD + (this.claimedPerWebhook.get(webhookId) ?? 0);
        const due = this.store.dueOf(webhookId, now, limit);
        if (due.length < limit) {
            this.allDueReadUntil.set(webhookId, this.store.nextDueOfAfter(webhookId, now) ?? Infinity);
        }
        return { deliveries: due.filter((delivery) => !this.claimed.has(delivery.id)), next: 0 };
    }

    /** Nothing due: when its next delivery falls due; undefined when one is due (claimed ones are). */
    private idleUntil(webhookId: string, now: number): number | undefined {
        const next = this.store.nextDueOf(webhookId);
        if (next === null) {
            return Infinity;
        }
        return next > now ? next : undefined;
    }

    public async recordAll(outcomes: readonly AttemptOutcome[]): Promise<void> {
        this.store.recordAll(outcomes);
        for (const { attempt, status } of outcomes) {
            const webhookId = this.unclaim(attempt.deliveryId);
            if (webhookId !== undefined && status === "pending") {
                // A retry is in the file only now: the reads made while it waited did not see it.
                this.allDueReadUntil.delete(webhookId);
            }
        }
    }

    public async release(deliveryIds: readonly string[]): Promise<void> {
        for (const id of deliveryIds) {
            const webhookId = this.unclaim(id);
            if (webhookId !== undefined) {
                // Pending and due, in the file only: read from there.
                this.allDueReadUntil.delete(webhookId);
            }
        }
    }

    public touched(webhookId: string): void {
        this.allDueReadUntil.delete(webhookId);
    }

    public forget(webhookId: string): void {
        this.readAhead.delete(webhookId);
        this.allDueReadUntil.delete(webhookId);
    }

    /** Claims live in memory only: they end with it. */
    public async letGo(): Promise<void> {}

    public async nextDueAfter(now: number): Promise<number | null> {
        return this.store.nextDueAfter(now);
    }

    public async cancelPending(webhookId: string, reason: string, now: number): Promise<number> {
        this.forget(webhookId);
        return this.store.cancelPending(webhookId, reason, now);
    }

    public async deadStreak(webhookId: string, window: number): Promise<number> {
        return this.store.deadStreak(webhookId, window);
    }

    public makeRoom(): void {
        this.checkpoint();
    }

    private unclaim(deliveryId: string): string | undefined {
        const webhookId = this.claimed.get(deliveryId);
        if (webhookId === undefined) {
            return undefined;
        }
        this.claimed.delete(deliveryId);
        const left = (this.claimedPerWebhook.get(webhookId) ?? 1) - 1;
        if (left > 0) {
            this.claimedPerWebhook.set(webhookId, left);
        } else {
            this.claimedPerWebhook.delete(webhookId);
        }
        return webhookId;
    }
}
