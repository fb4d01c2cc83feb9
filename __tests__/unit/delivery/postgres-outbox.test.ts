import { Delivery } from "../../../src/contracts";
import { PostgresOutbox, SharedDeliveries } from "../../../src/cluster/postgres-outbox";
import { DeliveryDispatcher } from "../../../src/delivery/dispatcher";
import { SharedRegisterError } from "../../../src/webhooks/shared-register";

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
        dispatcher.start();
        // An event a millisecond for half a second, each waking the dispatcher.
        for (let event = 0; event < 500; event++) {
            dispatcher.wake();
            await new Promise((resolve) => setTimeout(resolve, 1));
        }
        await dispatcher.stop();

        // The first pass fails, and the next may come only after its 1 s backoff.
        expect(shared.calls).toBe(1);
        expect(removed).toEqual([]);
        expect(errors).toHaveLength(1);
        expect(String(errors[0])).toMatch(/cannot be used/);
    });
});
