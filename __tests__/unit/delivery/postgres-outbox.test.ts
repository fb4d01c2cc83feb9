import { Delivery } from "../../../src/contracts";
import { PostgresOutbox, SharedDeliveries } from "../../../src/cluster/postgres-outbox";
import { DeliveryDispatcher } from "../../../src/delivery/dispatcher";
import { SharedRegisterError } from "../../../src/webhooks/shared-register";
import { MemoryOutbox, MemorySharedDeliveries } from "../../support/memory-outbox";

const owed: Delivery = {
    id: "delivery-1",
    webhookId: "webhook-1",
    event: "block.applied",
    body: "{}",
    status: "pending",
    attempts: 0,
    nextAttemptAt: 0,
    reason: null,
    createdAt: 0,
    updatedAt: 0,
};

/** PostgreSQL out of reach: every statement fails, and each one is counted. */
const unreachable = (): SharedDeliveries & { calls: number } => {
    const shared = {
        calls: 0,
        fail: async (): Promise<never> => {
            shared.calls++;
            throw new SharedRegisterError("the shared register (PostgreSQL at 127.0.0.1:5432/relays) cannot be used");
        },
    };
    return Object.assign(shared, {
        forward: shared.fail,
        dueWebhookIds: shared.fail,
        claim: shared.fail,
        recordAll: shared.fail,
        release: shared.fail,
        nextDueAfter: shared.fail,
        cancelPending: shared.fail,
        deadStreak: shared.fail,
    });
};

describe("the dispatcher over the shared outbox", () => {
    it("waits out its backoff while PostgreSQL is down, however often events wake it, and keeps what it owes", async () => {
        const shared = unreachable();
        const removed: string[] = [];
        const errors: unknown[] = [];
        const dispatcher = new DeliveryDispatcher(
            {
                concurrency: 8,
                concurrencyPerTarget: 8,
                concurrencyPerTargetFloor: 1,
                retryScheduleSeconds: [1],
                autoDisableAfterDeadDeliveries: 0,
            },
            {
                outbox: new PostgresOutbox({
                    local: { oldestPending: () => [owed], remove: (ids) => removed.push(...ids) },
                    shared,
                    leaseMs: 2_000,
                    attemptMs: 1_000,
                }),
                expander: {
                    expand: () => ({ drained: true, webhookIds: [], deliveries: [], committed: 0, gatherMs: 0 }),
                },
                sender: { send: () => Promise.reject(new Error("nothing may be sent")) },
                findWebhook: () => undefined,
                disableWebhook: async () => false,
                health: { failed: () => "", succeeded: () => undefined },
                onReport: () => undefined,
                onError: (error) => errors.push(error),
            },
        );
        jest.useFakeTimers();
        try {
            dispatcher.start();
            // An event a millisecond for half a second, each waking the dispatcher.
            for (let event = 0; event < 500; event++) {
                dispatcher.wake();
                await jest.advanceTimersByTimeAsync(1);
            }
            await dispatcher.stop();
        } finally {
            jest.useRealTimers();
        }

        // The first pass fails, and the next may come only after its 1 s backoff.
        expect(shared.calls).toBe(1);
        expect(removed).toEqual([]);
        expect(errors).toHaveLength(1);
        expect(String(errors[0])).toMatch(/cannot be used/);
    });
});

describe("the shared outbox's claims ahead", () => {
    const setUp = (leaseMs: number, attemptMs: number) => {
        const store = new MemoryOutbox("postgres");
        const shared = new MemorySharedDeliveries(store, "this relay");
        const claims = jest.spyOn(shared, "claim");
        const releases = jest.spyOn(shared, "release");
        const outbox = new PostgresOutbox({ local: store.journalFile, shared, leaseMs, attemptMs });
        return { store, outbox, claims, releases };
    };
    const ids = (claim: { deliveries: Delivery[] }): string[] => claim.deliveries.map((delivery) => delivery.id);

    it("claims a webhook's due deliveries once for many attempts, each handed out once", async () => {
        const { store, outbox, claims } = setUp(60_000, 10_000);
        store.owe("webhook-1", 300);

        const handedOut: string[] = [];
        for (let attempt = 0; attempt < 150; attempt++) {
            handedOut.push(...ids(await outbox.claim("webhook-1", 1_000, 2)));
        }

        expect(handedOut).toHaveLength(300);
        expect(new Set(handedOut).size).toBe(300);
        // 256 a claim: two round trips, where a claim for each freed slot took 150.
        expect(claims).toHaveBeenCalledTimes(2);
    });

    it("gives back what it claimed ahead once its lease would not outlast an attempt, for any relay to take", async () => {
        const { store, outbox, releases } = setUp(3_000, 2_000);
        store.owe("webhook-1", 10);
        expect(ids(await outbox.claim("webhook-1", 0, 1))).toEqual(["webhook-1-0"]);

        // At 600 ms, an attempt of 2 s (and a margin) would outlast the lease, which ends at 3 s.
        const late = await outbox.claim("webhook-1", 600, 1);

        expect(releases).toHaveBeenCalledWith(
            Array.from({ length: 9 }, (_, n) => `webhook-1-${n + 1}`),
            600,
        );
        // Given back, then claimed afresh under a new lease.
        expect(ids(late)).toEqual(["webhook-1-1"]);
        expect(store.leases.get("webhook-1-2")).toBe("this relay");
    });

    it("lets go of the claims it did not start when the dispatcher stops", async () => {
        const { store, outbox } = setUp(60_000, 10_000);
        store.owe("webhook-1", 5);
        await outbox.claim("webhook-1", 1_000, 2);

        await outbox.letGo(1_500);

        expect([...store.leases.keys()]).toEqual(["webhook-1-0", "webhook-1-1"]);
        expect(store.dueOfAll(1_500).map((delivery) => delivery.id)).toEqual([
            "webhook-1-2",
            "webhook-1-3",
            "webhook-1-4",
        ]);
    });
});
