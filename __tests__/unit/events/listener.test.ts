import { Webhook } from "../../../src/contracts";
import { KernelEventListener } from "../../../src/events/listener";
import { RegexpPool } from "../../../src/events/regexp-pool";
import { WebhookIndex } from "../../../src/events/webhook-index";
import { JournaledEvent } from "../../../src/store/journal-entry";

const webhook = (id: string, overrides: Partial<Webhook> = {}): Webhook => ({
    id,
    event: "transaction.applied",
    target: "http://127.0.0.1:9/hook",
    enabled: true,
    conditions: [],
    match: "any",
    token: "0".repeat(64),
    createdAt: 0,
    updatedAt: 0,
    ...overrides,
});

describe("the kernel event listener", () => {
    const setUp = () => {
        const index = new WebhookIndex({ regexpInputChars: 1024, regexps: new RegexpPool(100) });
        const journaled: JournaledEvent[] = [];
        const listener = new KernelEventListener({
            index,
            journal: (event) => journaled.push(event),
            onError: (error) => {
                throw error;
            },
            matchingBudgetMs: 5,
        });
        return { index, journaled, listener };
    };

    it("journals what an event owes, once serialised for every webhook", () => {
        const { index, journaled, listener } = setUp();
        index.put(webhook("all"));
        index.put(webhook("big", { conditions: [{ key: "amount", condition: "gt", value: 10 }] }));
        index.put(webhook("small", { conditions: [{ key: "amount", condition: "lt", value: 10 }] }));

        listener.handle({ name: "transaction.applied", data: { amount: "5" } });
        listener.handle({ name: "block.applied", data: { height: 1 } });

        expect(journaled).toHaveLength(1);
        expect(journaled[0].deliveries.map(({ webhookId }) => webhookId)).toEqual(["small"]);
        // The webhook without conditions is owed too: in the group, its delivery's id given by the engine.
        expect(journaled[0].deferredGroup).toEqual(["all"]);
        expect(journaled[0].deferred).toEqual([]);
        expect(JSON.parse(journaled[0].body)).toMatchObject({ event: "transaction.applied", data: { amount: "5" } });
        expect(listener.stats.eventsSeen).toBe(2);
        expect(listener.stats.deliveriesQueued).toBe(2);
        expect(listener.stats.deferredTests).toBe(0);
    });

    it("warms its path up on a made-up event: rehearsed, never journaled nor counted", () => {
        const { index, journaled, listener } = setUp();
        index.put(webhook("all"));
        index.put(webhook("pattern", { conditions: [{ key: "vendorField", condition: "regexp", value: "^x" }] }));
        const rehearsed: JournaledEvent[] = [];

        listener.warmUp("transaction.applied", (event) => rehearsed.push(event));
        listener.warmUp("nobody.listens", (event) => rehearsed.push(event));

        expect(journaled).toEqual([]);
        expect(listener.stats.eventsSeen).toBe(0);
        expect(listener.stats.deliveriesQueued).toBe(0);
        expect(rehearsed.map(({ event, deliveries }) => [event, deliveries.length])).toEqual([
            ["transaction.applied", 0],
            ["nobody.listens", 0],
        ]);
        expect(rehearsed[0].deferredGroup).toEqual(["all", "pattern"]);
        expect(JSON.parse(rehearsed[1].body)).toMatchObject({ event: "nobody.listens" });
    });

    it("never throws, whatever its warm-up meets", () => {
        const { listener } = setUp();
        expect(() =>
            listener.warmUp("transaction.applied", () => {
                throw new Error("the journal's folder is gone");
            }),
        ).not.toThrow();
    });
});
