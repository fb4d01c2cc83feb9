import { Delivery } from "../contracts";
import { AttemptOutcome, DeliveryStore } from "../store/delivery-store";
import { Claim, Outbox } from "../store/outbox";
import { PostgresDeliveries } from "./postgres-deliveries";

export type SharedDeliveries = Pick<
    PostgresDeliveries,
    "forward" | "dueWebhookIds" | "claim" | "recordAll" | "release" | "nextDueAfter" | "cancelPending" | "deadStreak"
>;

export interface PostgresOutboxSetup {
    /** This relay's own file: the deliveries its journal gave, kept until the shared outbox has them. */
    local: Pick<DeliveryStore, "oldestPending" | "remove">;
    shared: SharedDeliveries;
    /** How long a claimed delivery is this relay's; longer than an attempt may take. */
    leaseMs: number;
    /** The longest an attempt may take: one claimed ahead is started only while its lease outlasts it. */
    attemptMs: number;
    /** A checkpoint of this relay's own file (see Outbox.makeRoom). */
    checkpoint?: () => void;
}

// Deliveries forwarded per statement, and statements per pass (the rest goes on in the next pass).
const FORWARD_BATCH = 500;
const FORWARD_BATCHES_PER_PASS = 8;
// Without a notice, the shared outbox is looked at this often: retries other relays scheduled,
// leases that ran out, notices lost while the connection was down.
const LOOK_EVERY_MS = 1_000;
// Due deliveries of a webhook claimed at once and started from memory as slots free: one round trip
// for this many, where a claim for each freed slot cost a round trip of some 2 ms for 7 deliveries
// (one relay delivered 0.27 of what one on SQLite did).
const CLAIM_AHEAD = 256;
// A delivery claimed ahead is started only while its lease outlasts an attempt by this much.
const LEASE_MARGIN_MS = 500;

/**
 * The outbox every relay shares (storage.driver "postgres"). What this relay's journal gives goes
 * to its own file first, then is forwarded to PostgreSQL, where a delivery another relay forwarded
 * already is one delivery, not two. A claim is a lease in the database: a relay that stops
 * mid-attempt leaves leases that run out, and another relay claims the deliveries then.
 */
export class PostgresOutbox implements Outbox {
    public readonly lookEveryMs = LOOK_EVERY_MS;
    /**
     * Webhooks the shared register did not hold when their deliveries were forwarded (a relay moving
     * its own register in forwards before the move): their deliveries stay in this relay's file,
     * passed over until the next look; a webhook deleted for good takes them with it when this
     * relay's copy follows the register.
     */
    private readonly unknownWebhooks = new Set<string>();
    /** Each webhook's due deliveries claimed ahead, in due order, with the lease they share. */
    private readonly ahead = new Map<string, { deliveries: Delivery[]; next: number; leaseUntil: number }>();

    public constructor(private readonly setup: PostgresOutboxSetup) {}

    public async webhooksWithWork(now: number): Promise<string[]> {
        this.unknownWebhooks.clear();
        return this.setup.shared.dueWebhookIds(now);
    }

    /** Moves this relay's deliveries into the shared outbox, oldest first. */
    public async takeIn(): Promise<{ webhookIds: string[]; done: boolean }> {
        const { local, shared } = this.setup;
        const webhookIds = new Set<string>();
        for (let batch = 0; batch < FORWARD_BATCHES_PER_PASS; batch++) {
            const deliveries = local.oldestPending(FORWARD_BATCH, [...this.unknownWebhooks]);
            if (deliveries.length === 0) {
                return { webhookIds: [...webhookIds], done: true };
            }
            const unknown = new Set(await shared.forward(deliveries));
            const written = deliveries.filter((delivery) => !unknown.has(delivery.webhookId));
            // Written there: a crash before this line forwards them again, and their ids make that harmless.
            local.remove(written.map((delivery) => delivery.id));
            written.forEach((delivery) => webhookIds.add(delivery.webhookId));
            unknown.forEach((id) => this.unknownWebhooks.add(id));
            if (deliveries.length < FORWARD_BATCH) {
                return { webhookIds: [...webhookIds], done: true };
            }
        }
        return { webhookIds: [...webhookIds], done: false };
    }

    /**
     * Takes from what was claimed ahead while its lease outlasts an attempt, and claims ahead again
     * when that runs out. Fewer than asked: the webhook waits for the next look, or for one of its
     * attempts to end.
     */
    public async claim(webhookId: string, now: number, limit: number): Promise<Claim> {
        const deliveries = this.takeAhead(webhookId, now, limit);
        if (deliveries.length === limit) {
            return { deliveries };
        }
        const leaseUntil = now + this.setup.leaseMs;
        const claimed = await this.setup.shared.claim(
            webhookId,
            now,
            Math.max(CLAIM_AHEAD, limit - deliveries.length),
            leaseUntil,
        );
        const wanted = limit - deliveries.length;
        deliveries.push(...claimed.slice(0, wanted));
        if (claimed.length > wanted) {
            this.ahead.set(webhookId, { deliveries: claimed, next: wanted, leaseUntil });
        }
        return deliveries.length < limit ? { deliveries, idleUntil: Infinity } : { deliveries };
    }

    /** Up to `limit` deliveries claimed ahead whose lease outlasts an attempt started now; the others go back. */
    private takeAhead(webhookId: string, now: number, limit: number): Delivery[] {
        const batch = this.ahead.get(webhookId);
        if (!batch) {
            return [];
        }
        if (now + this.setup.attemptMs + LEASE_MARGIN_MS > batch.leaseUntil) {
            this.giveBack(webhookId, now);
            return [];
        }
        const taken = batch.deliveries.slice(batch.next, batch.next + limit);
        batch.next += taken.length;
        if (batch.next >= batch.deliveries.length) {
            this.ahead.delete(webhookId);
        }
        return taken;
    }

    /** Deliveries claimed ahead and not started are due again at once, for any relay. */
    private giveBack(webhookId: string, now: number): void {
        const batch = this.ahead.get(webhookId);
        this.ahead.delete(webhookId);
        const ids = batch?.deliveries.slice(batch.next).map((delivery) => delivery.id) ?? [];
        if (ids.length > 0) {
            // Should it fail, their leases run out instead.
            this.setup.shared.release(ids, now).catch(() => undefined);
        }
    }

    public recordAll(outcomes: readonly AttemptOutcome[]): Promise<void> {
        return this.setup.shared.recordAll(outcomes);
    }

    public release(deliveryIds: readonly string[], now: number): Promise<void> {
        return this.setup.shared.release(deliveryIds, now);
    }

    public touched(): void {}

    public forget(webhookId: string): void {
        this.giveBack(webhookId, Date.now());
    }

    public async letGo(now: number): Promise<void> {
        const ids = [...this.ahead.values()].flatMap((batch) =>
            batch.deliveries.slice(batch.next).map((delivery) => delivery.id),
        );
        this.ahead.clear();
        if (ids.length > 0) {
            await this.setup.shared.release(ids, now);
        }
    }

    public nextDueAfter(now: number): Promise<number | null> {
        return this.setup.shared.nextDueAfter(now);
    }

    public cancelPending(webhookId: string, reason: string, now: number): Promise<number> {
        this.ahead.delete(webhookId);
        return this.setup.shared.cancelPending(webhookId, reason, now);
    }

    public deadStreak(webhookId: string, window: number): Promise<number> {
        return this.setup.shared.deadStreak(webhookId, window);
    }

    public makeRoom(): void {
        this.setup.checkpoint?.();
    }
}
