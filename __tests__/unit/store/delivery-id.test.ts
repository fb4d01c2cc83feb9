import { readFileSync } from "fs";
import { join } from "path";
import { validate, version } from "uuid";

import {
    chainObjectOf,
    deliveryIdScheme,
    freshDeliveryIds,
    newDeliveryId,
    sharedDeliveryIds,
} from "../../../src/store/delivery-id";

/** Payloads a real ARK Core 3.9.1 node dispatched, by event name. */
const samples = JSON.parse(readFileSync(join(__dirname, "../../fixtures/node-samples/events.json"), "utf8")) as Record<
    string,
    { samples: Record<string, unknown> }
>;
const sampleOf = (event: string): unknown => Object.values(samples[event].samples)[0];

describe("delivery ids", () => {
    it("are version-7 UUIDs that grow with every call, so the outbox's id index only appends", () => {
        const ids = Array.from({ length: 10_000 }, newDeliveryId);

        ids.forEach((id) =>
            expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        );
        expect([...ids].sort()).toEqual(ids);
        expect(new Set(ids).size).toBe(ids.length);
    });

    it("gives each delivery of an event a version-7 id of its own from one draw, and every later event's ids sort after", () => {
        const events = Array.from({ length: 500 }, () => {
            const idOf = freshDeliveryIds();
            return Array.from({ length: 12 }, (_, webhook) => idOf(`webhook-${webhook}`));
        });
        const all = events.flat();

        all.forEach((id) => {
            expect(validate(id)).toBe(true);
            expect(version(id)).toBe(7);
        });
        expect(new Set(all).size).toBe(all.length);
        for (let event = 1; event < events.length; event++) {
            expect([...events[event]].sort()[0] > [...events[event - 1]].sort()[11]).toBe(true);
        }
        // One draw an event: its ids share the drawn time and sequence, and differ in their random end.
        events.forEach((ids) => expect(new Set(ids.map((id) => id.slice(0, 28))).size).toBe(1));
    });

    it("finds the chain object of the chain events a node dispatched, and none in the node's own", () => {
        for (const event of ["block.applied", "block.received", "block.forged"]) {
            expect(chainObjectOf(sampleOf(event))).toBe((sampleOf(event) as { id: string }).id);
        }
        for (const event of ["transaction.applied", "transaction.pool.added", "transaction.forged"]) {
            expect(chainObjectOf(sampleOf(event))).toMatch(/^[0-9a-f]{64}$/);
        }
        for (const event of ["wallet.vote", "wallet.unvote"]) {
            const { transaction } = sampleOf(event) as { transaction: { id: string } };
            expect(chainObjectOf(sampleOf(event))).toBe(transaction.id);
        }
        expect(chainObjectOf(sampleOf("round.created"))).toBe("round 1");
        const liveDelegate = { getAttribute: (key: string) => (key === "delegate.round" ? 7 : undefined) };
        expect(chainObjectOf([liveDelegate])).toBe("round 7");
        for (const event of [
            "kernel.serviceProvider.booted",
            "forger.started",
            "queue.finished",
            "state.started",
            "database.preConnect",
        ]) {
            expect(chainObjectOf(sampleOf(event))).toBeUndefined();
        }
    });

    it("gives a chain event's delivery to a webhook the same id on every relay, and each other delivery its own", () => {
        const block = sampleOf("block.applied");
        const id = sharedDeliveryIds("block.applied", block)("webhook-1");

        expect(sharedDeliveryIds("block.applied", JSON.parse(JSON.stringify(block)))("webhook-1")).toBe(id);
        expect(validate(id)).toBe(true);
        expect(version(id)).toBe(8);
        expect(sharedDeliveryIds("block.applied", block)("webhook-2")).not.toBe(id);
        expect(sharedDeliveryIds("block.reverted", block)("webhook-1")).not.toBe(id);

        const own = sharedDeliveryIds("forger.started", sampleOf("forger.started"));
        const [first, second] = [own("webhook-1"), own("webhook-1")];
        expect(first).not.toBe(second);
        expect(version(first)).toBe(7);
        expect(version(freshDeliveryIds()("webhook-1"))).toBe(7);
    });

    it("derives a different id for every pair of chain event and webhook", () => {
        const ids = new Set<string>();
        for (let height = 0; height < 1_000; height++) {
            const idOf = sharedDeliveryIds("block.applied", { id: `block-${height}`, height });
            for (let webhook = 0; webhook < 20; webhook++) {
                ids.add(idOf(`webhook-${webhook}`));
            }
        }

        expect(ids.size).toBe(20_000);
    });

    it("shares ids between relays only with the shared register", () => {
        const data = sampleOf("transaction.applied");
        const ids = (driver: "sqlite" | "postgres") =>
            deliveryIdScheme({ storage: { driver } })("transaction.applied", data);

        expect(ids("postgres")("webhook-1")).toBe(ids("postgres")("webhook-1"));
        expect(ids("sqlite")("webhook-1")).not.toBe(ids("sqlite")("webhook-1"));
    });
});
