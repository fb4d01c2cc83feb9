import { Condition, Webhook } from "../../../src/contracts";
import { equalityKey, lookupPairsOf } from "../../../src/events/equality-index";
import { valuesEqual } from "../../../src/events/normalise";
import { RegexpPool } from "../../../src/events/regexp-pool";
import { WebhookIndex } from "../../../src/events/webhook-index";

const webhook = (id: string, conditions: Condition[], match: Webhook["match"] = "any"): Webhook => ({
    id,
    event: "transaction.applied",
    target: "http://127.0.0.1:9/hook",
    enabled: true,
    conditions,
    match,
    token: "0".repeat(64),
    createdAt: 0,
    updatedAt: 0,
});

const options = () => ({ regexpInputChars: 1024, regexps: new RegexpPool(100) });
const address = (index: number): string => `AddressNumber${String(index).padStart(8, "0")}`;

describe("the equality index", () => {
    it("spells alike exactly the values eq holds equal", () => {
        const values: unknown[] = [
            "100",
            100,
            "100.0",
            "1e2",
            " 100 ",
            "0100",
            100.5,
            "100.50",
            "-0",
            0,
            "0.000",
            "abc",
            "ABC",
            "",
            true,
            "true",
            false,
            null,
            BigInt("123456789012345678901234567890"),
            "123456789012345678901234567890",
            "1e999",
            "1E999",
            Buffer.from("1234", "hex"),
            "1234",
            { toString: () => "5", isBigNumber: true },
        ];
        for (const left of values) {
            for (const right of values) {
                const both = [equalityKey(left), equalityKey(right)];
                if (both.every((key) => key !== undefined)) {
                    expect({ left, right, same: both[0] === both[1] }).toEqual({
                        left,
                        right,
                        same: valuesEqual(left, right),
                    });
                }
            }
        }
        expect(equalityKey([1])).toBeUndefined();
        expect(equalityKey({ a: 1 })).toBeUndefined();
    });

    it("finds a webhook by its eq conditions: all of them with match any, one with match all", () => {
        const eq = (key: string, value: unknown): Condition => ({ key, condition: "eq", value });
        const gt: Condition = { key: "amount", condition: "gt", value: 5 };

        expect(lookupPairsOf(webhook("a", [eq("recipientId", "A"), eq("senderId", "B")]))).toEqual({
            pairs: [eq("recipientId", "A"), eq("senderId", "B")],
            exact: true,
        });
        expect(lookupPairsOf(webhook("b", [eq("recipientId", "A"), gt]))).toBeUndefined();
        expect(lookupPairsOf(webhook("c", [gt, eq("recipientId", "A")], "all"))).toEqual({
            pairs: [eq("recipientId", "A")],
            exact: false,
        });
        expect(lookupPairsOf(webhook("d", [eq("asset", { votes: [] })]))).toBeUndefined();
        expect(lookupPairsOf(webhook("e", []))).toBeUndefined();
    });

    it("decides 10,000 webhooks of one recipient each by lookup: nothing left undecided, whatever the budget", () => {
        const index = new WebhookIndex(options());
        for (let number = 0; number < 10_000; number++) {
            index.put(webhook(`w${number}`, [{ key: "recipientId", condition: "eq", value: address(number) }]));
        }
        index.put(
            webhook(
                "both",
                [
                    { key: "amount", condition: "gte", value: 1 },
                    { key: "recipientId", condition: "eq", value: address(42) },
                ],
                "all",
            ),
        );

        // A deadline already passed: before the index, all but the first webhook were left undecided.
        const hit = index.matching("transaction.applied", { recipientId: address(42), amount: "7" }, 0, () => 1);
        const miss = index.matching("transaction.applied", { recipientId: "Nobody", amount: "7" }, 0, () => 1);
        const numeric = index.matching("transaction.applied", { recipientId: 42 }, 0, () => 1);

        // Found by lookup, the exact ones need no time; "both" has another condition to test.
        expect(hit.matched.map(({ id }) => id)).toEqual(["w42"]);
        expect(hit.deferred.map(({ id }) => id)).toEqual(["both"]);
        const unhurried = index.matching("transaction.applied", { recipientId: address(42), amount: "7" });
        expect(unhurried.matched.map(({ id }) => id).sort()).toEqual(["both", "w42"]);
        expect(miss).toEqual({ matched: [], deferred: [] });
        expect(numeric).toEqual({ matched: [], deferred: [] });
    });

    it("leaves the webhooks it cannot find to the engine once there are too many to test on the listener's path", () => {
        const index = new WebhookIndex(options());
        index.put(webhook("every", []));
        for (let number = 0; number < 1_000; number++) {
            index.put(webhook(`range${number}`, [{ key: "amount", condition: "gt", value: number }]));
        }

        const result = index.matching("transaction.applied", { amount: "500" }, Infinity);

        expect(result.matched).toEqual([]);
        expect(result.deferred).toEqual([]);
        expect(result.owedInGroup).toBe(1);
        expect(result.deferredGroup).toHaveLength(1_001);
        expect(result.deferredGroup?.[0]).toBe("every");
    });
});
