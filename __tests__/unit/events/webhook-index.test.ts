import { Webhook } from "../../../src/contracts";
import { RegexpPool } from "../../../src/events/regexp-pool";
import { WebhookIndex } from "../../../src/events/webhook-index";

const webhook = (id: string, overrides: Partial<Webhook> = {}): Webhook => ({
    id,
    event: "block.applied",
    target: "http://127.0.0.1:9/hook",
    enabled: true,
    conditions: [{ key: "height", condition: "gt", value: 10 }],
    match: "any",
    token: "0".repeat(64),
    createdAt: 0,
    updatedAt: 0,
    ...overrides,
});

describe("the webhook index", () => {
    it("matches the enabled webhooks of an event by their conditions", () => {
        const index = new WebhookIndex({ regexpInputChars: 1024, regexps: new RegexpPool(100) });
        index.put(webhook("a"));
        index.put(webhook("b", { conditions: [] }));
        index.put(webhook("c", { enabled: false }));
        index.put(webhook("d", { event: "block.forged" }));

        expect(index.matching("block.applied", { height: 5 })).toEqual({
            matched: [],
            deferred: [],
            deferredGroup: ["b"],
            owedInGroup: 1,
        });
        expect(index.matching("block.applied", { height: 11 }).matched.map(({ id }) => id)).toEqual(["a"]);
    });

    it("leaves the webhooks without conditions to the engine, owed whatever the event, first in the group", () => {
        const index = new WebhookIndex({ regexpInputChars: 1024, regexps: new RegexpPool(100) });
        index.put(webhook("pattern", { conditions: [{ key: "vendorField", condition: "regexp", value: "^probe" }] }));
        index.put(webhook("every"));
        index.put(webhook("each", { conditions: [] }));
        index.put(webhook("plain", { conditions: [] }));
        index.put(webhook("plain", { conditions: [{ key: "height", condition: "lt", value: 10 }] }));

        const result = index.matching("block.applied", { height: 5 });

        expect(result.matched.map(({ id }) => id)).toEqual(["plain"]);
        expect(result.deferredGroup).toEqual(["each", "pattern"]);
        expect(result.owedInGroup).toBe(1);
        expect(index.matcherOf("each")?.unconditional).toBe(true);
        expect(index.matcherOf("plain")?.unconditional).toBe(false);
    });

    it("gives an enabled webhook by id, and forgets one disabled, moved or removed", () => {
        const index = new WebhookIndex({ regexpInputChars: 1024, regexps: new RegexpPool(100) });
        index.put(webhook("a"));
        index.put(webhook("b"));
        index.put(webhook("c"));

        index.put(webhook("a", { enabled: false }));
        index.put(webhook("b", { event: "block.forged" }));
        index.remove("c");

        expect(index.get("a")).toBeUndefined();
        expect(index.get("b")?.event).toBe("block.forged");
        expect(index.get("c")).toBeUndefined();
        expect(index.matching("block.applied", { height: 11 })).toEqual({ matched: [], deferred: [] });
        expect(index.size).toBe(1);
    });

    it("leaves a webhook with a regexp condition to be tested off the listener's path, and tests the others", () => {
        const index = new WebhookIndex({ regexpInputChars: 1024, regexps: new RegexpPool(100) });
        index.put(webhook("pattern", { conditions: [{ key: "vendorField", condition: "regexp", value: "^probe" }] }));
        index.put(webhook("plain", { conditions: [{ key: "vendorField", condition: "eq", value: "probe" }] }));

        const result = index.matching("block.applied", { vendorField: "probe" });

        expect(result.deferred).toEqual([]);
        expect(result.deferredGroup).toEqual(["pattern"]);
        expect(result.matched.map(({ id }) => id)).toEqual(["plain"]);
        // Off the listener's path, the same matcher decides.
        expect(index.matcherOf("pattern")?.test({ vendorField: "probe" })).toBe(true);
    });

    it("hands out the same group of regexp webhooks until the event's webhooks change", () => {
        const index = new WebhookIndex({ regexpInputChars: 1024, regexps: new RegexpPool(100) });
        const regexp = (id: string, event = "block.applied") =>
            webhook(id, { event, conditions: [{ key: "vendorField", condition: "regexp", value: "^probe" }] });
        index.put(regexp("first"));
        index.put(regexp("elsewhere", "block.forged"));

        const group = index.matching("block.applied", {}).deferredGroup;
        expect(index.matching("block.applied", { other: 1 }).deferredGroup).toBe(group);
        index.put(regexp("elsewhere-too", "block.forged"));
        expect(index.matching("block.applied", {}).deferredGroup).toBe(group);

        index.put(regexp("second"));
        const grown = index.matching("block.applied", {}).deferredGroup;
        expect(grown).not.toBe(group);
        expect([...(grown ?? [])].sort()).toEqual(["first", "second"]);
        index.put(webhook("second", { conditions: [] }));
        expect(index.matching("block.applied", {}).deferredGroup).toEqual(["second", "first"]);
        index.put(webhook("second"));
        expect(index.matching("block.applied", {}).deferredGroup).toEqual(["first"]);
        index.remove("first");
        expect(index.matching("block.applied", {}).deferredGroup).toBeUndefined();
    });

    it("hands each event's new group to onGroup in the turn after the change, with the group it replaces", async () => {
        const heard: Array<[readonly string[] | undefined, readonly string[] | undefined]> = [];
        const index = new WebhookIndex({ regexpInputChars: 1024, regexps: new RegexpPool(100) }, (group, replaced) =>
            heard.push([group, replaced]),
        );
        const regexp = (id: string) =>
            webhook(id, { conditions: [{ key: "vendorField", condition: "regexp", value: "^probe" }] });
        const turn = () => new Promise((resolve) => setImmediate(resolve));
        index.put(regexp("first"));
        index.put(regexp("second"));
        index.put(webhook("plain", { event: "block.forged" }));
        expect(heard).toEqual([]);

        await turn();
        expect(heard).toHaveLength(1);
        const [[group, replaced]] = heard;
        expect([...(group ?? [])].sort()).toEqual(["first", "second"]);
        expect(replaced).toBeUndefined();
        // The very array the listener then hands the journal.
        expect(index.matching("block.applied", {}).deferredGroup).toBe(group);
        expect([...index.eventNames()].sort()).toEqual(["block.applied", "block.forged"]);

        // Two changes in one turn: one call, replacing the group of before the first.
        index.put(regexp("third"));
        index.remove("first");
        await turn();
        expect(heard).toHaveLength(2);
        expect([...(heard[1][0] ?? [])].sort()).toEqual(["second", "third"]);
        expect(heard[1][1]).toBe(group);

        index.remove("second");
        index.remove("third");
        await turn();
        expect(heard[2]).toEqual([undefined, heard[1][0]]);
    });
});
