import { PostgresOutbox, SharedDeliveries } from "../../src/cluster/postgres-outbox";
import { Delivery } from "../../src/contracts";
import { AttemptOutcome } from "../../src/store/delivery-store";
import { Outbox } from "../../src/store/outbox";
import { SqliteOutbox, SqliteOutboxStore } from "../../src/store/sqlite-outbox";

/** A pending delivery of a block.applied event, never attempted, due at `due`. */
export const owedDelivery = (id: string, webhookId: string, due: number): Delivery => ({
    id,
    webhookId,
    event: "block.applied",
    body: "{}",
    status: "pending",
    attempts: 0,
    nextAttemptAt: due,
    reason: null,
    createdAt: due,
    updatedAt: due,
});

export type DriverName = "sqlite" | "postgres";

/**
 * The outbox's contract over an array: what the dispatcher sees of SQLite, without SQLite, or of
 * PostgreSQL's shared outbox (through MemorySharedDeliveries). `journalFile` is where the journal's
 * deliveries land: this outbox itself for SQLite; for PostgreSQL, this relay's own file, from where
 * the driver forwards them here.
 */
export class MemoryOutbox implements SqliteOutboxStore {
    public readonly deliveries: Delivery[] = [];
    public readonly recorded: AttemptOutcome[] = [];
    public readonly journalFile: MemoryOutbox;
    /** Who holds each delivery's lease, as the shared outbox's lease_owner says. */
    public readonly leases = new Map<string, string>();

    public constructor(private readonly driverName: DriverName = "sqlite") {
        this.journalFile = driverName === "sqlite" ? this : new MemoryOutbox();
    }

    public driver(): Outbox {
        return this.driverName === "sqlite"
            ? new SqliteOutbox(this)
            : new PostgresOutbox({
                  local: this.journalFile,
                  shared: new MemorySharedDeliveries(this),
                  leaseMs: 60_000,
                  attemptMs: 10_000,
              });
    }

    public oldestPending(limit: number): Delivery[] {
        return this.pending().slice(0, limit);
    }

    public remove(ids: readonly string[]): void {
        const gone = new Set(ids);
        this.deliveries.splice(
            0,
            this.deliveries.length,
            ...this.deliveries.filter((delivery) => !gone.has(delivery.id)),
        );
    }

    public owe(webhookId: string, count = 1, due = 0): void {
        for (let index = 0; index < count; index++) {
            this.deliveries.push(owedDelivery(`${webhookId}-${this.deliveries.length}`, webhookId, due));
        }
    }

    public pendingWebhookIds(): string[] {
        return [...new Set(this.pending().map((delivery) => delivery.webhookId))];
    }

    public nextDueOf(webhookId: string): number | null {
        return this.earliest(this.pending().filter((delivery) => delivery.webhookId === webhookId));
    }

    public dueOf(webhookId: string, now: number, limit: number): Delivery[] {
        return this.pending()
            .filter((delivery) => delivery.webhookId === webhookId && (delivery.nextAttemptAt ?? 0) <= now)
            .sort((a, b) => (a.nextAttemptAt ?? 0) - (b.nextAttemptAt ?? 0))
            .slice(0, limit)
            .map((delivery) => ({ ...delivery }));
    }

    public nextDueOfAfter(webhookId: string, now: number): number | null {
        return this.earliest(
            this.pending().filter(
                (delivery) => delivery.webhookId === webhookId && (delivery.nextAttemptAt ?? 0) > now,
            ),
        );
    }

    public dueOfAll(now: number): Delivery[] {
        return this.pending().filter((delivery) => (delivery.nextAttemptAt ?? 0) <= now);
    }

    public reschedule(id: string, at: number): void {
        const delivery = this.deliveries.find((candidate) => candidate.id === id);
        if (delivery) {
            delivery.nextAttemptAt = at;
        }
    }

    public nextDueAfter(now: number): number | null {
        return this.earliest(this.pending().filter((delivery) => (delivery.nextAttemptAt ?? 0) > now));
    }

    public recordAll(outcomes: readonly AttemptOutcome[]): void {
        outcomes.forEach((outcome) => this.record(outcome));
    }

    private record(outcome: AttemptOutcome): void {
        const delivery = this.deliveries.find((candidate) => candidate.id === outcome.attempt.deliveryId);
        if (delivery) {
            Object.assign(delivery, {
                status: outcome.status,
                attempts: outcome.attempt.number,
                nextAttemptAt: outcome.nextAttemptAt,
            });
        }
        this.recorded.push(outcome);
    }

    public cancelPending(webhookId: string, reason: string): number {
        const cancelled = this.pending().filter((delivery) => delivery.webhookId === webhookId);
        cancelled.forEach((delivery) => Object.assign(delivery, { status: "cancelled", reason, nextAttemptAt: null }));
        return cancelled.length;
    }

    public deadStreak(): number {
        return 0;
    }

    public pending(): Delivery[] {
        return this.deliveries.filter((delivery) => delivery.status === "pending");
    }

    private earliest(deliveries: Delivery[]): number | null {
        return deliveries.length === 0 ? null : Math.min(...deliveries.map((delivery) => delivery.nextAttemptAt ?? 0));
    }
}

/**
 * PostgresDeliveries' contract over a MemoryOutbox: deliveries forwarded once by id, claimed under a
 * lease (due again when it runs out), outcomes written only under this relay's lease. The same
 * contract is tested against PostgreSQL itself in __tests__/integration/shared-outbox.test.ts.
 */
export class MemorySharedDeliveries implements SharedDeliveries {
    public constructor(
        private readonly outbox: MemoryOutbox,
        private readonly relay = "relay",
    ) {}

    public async forward(deliveries: readonly Delivery[]): Promise<string[]> {
        const known = new Set(this.outbox.deliveries.map((delivery) => delivery.id));
        this.outbox.deliveries.push(...deliveries.filter((delivery) => !known.has(delivery.id)).map((d) => ({ ...d })));
        return [];
    }

    public async dueWebhookIds(now: number): Promise<string[]> {
        return [...new Set(this.outbox.dueOfAll(now).map((delivery) => delivery.webhookId))];
    }

    public async claim(webhookId: string, now: number, limit: number, leaseUntil: number): Promise<Delivery[]> {
        const claimed = this.outbox.dueOf(webhookId, now, limit);
        for (const { id } of claimed) {
            this.outbox.leases.set(id, this.relay);
            this.outbox.reschedule(id, leaseUntil);
        }
        return claimed;
    }

    public async recordAll(outcomes: readonly AttemptOutcome[]): Promise<void> {
        const ours = outcomes.filter(
            ({ attempt }) =>
                this.outbox.leases.get(attempt.deliveryId) === this.relay &&
                this.outbox.deliveries.find((delivery) => delivery.id === attempt.deliveryId)?.attempts ===
                    attempt.number - 1,
        );
        this.outbox.recordAll(ours);
        ours.forEach((outcome) => this.outbox.leases.delete(outcome.attempt.deliveryId));
    }

    public async release(deliveryIds: readonly string[], now: number): Promise<void> {
        for (const id of deliveryIds.filter((leased) => this.outbox.leases.get(leased) === this.relay)) {
            this.outbox.leases.delete(id);
            this.outbox.reschedule(id, now);
        }
    }

    public async nextDueAfter(now: number): Promise<number | null> {
        return this.outbox.nextDueAfter(now);
    }

    public async cancelPending(webhookId: string, reason: string): Promise<number> {
        return this.outbox.cancelPending(webhookId, reason);
    }

    public async deadStreak(): Promise<number> {
        return 0;
    }
}
