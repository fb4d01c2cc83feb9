import { Utils } from "@arkecosystem/crypto";

import samples from "../../fixtures/node-samples/events.json";
import { Condition, MatchMode } from "../../../src/contracts";
import { RegexpPool } from "../../../src/events/regexp-pool";
import { compileMatcher } from "../../../src/events/matcher";

const matches = (payload: unknown, conditions: Condition[], match: MatchMode = "any"): boolean =>
    compileMatcher(conditions, match, { regexpInputChars: 1024, regexps: new RegexpPool(100) }).test(payload);

const one = (key: string, condition: Condition["condition"], value?: unknown): Condition[] => [
    { key, condition, value },
];

const ABOVE_2_64 = "18446744073709551617"; // 2^64 + 1

describe("conditions, evaluated against a payload", () => {
    it.each<[string, unknown, Condition[], boolean]>([
        // eq / ne: values, not JSON spelling
        ["eq on equal strings", { a: "x" }, one("a", "eq", "x"), true],
        ["eq on different strings", { a: "x" }, one("a", "eq", "y"), false],
        ["eq on a number and its string", { a: 100 }, one("a", "eq", "100"), true],
        ["eq on a decimal spelling", { a: "100" }, one("a", "eq", "100.0"), true],
        ["eq on objects in another key order", { a: { x: 1, y: 2 } }, one("a", "eq", { y: 2, x: 1 }), true],
        ["eq on arrays", { a: [1, "b"] }, one("a", "eq", [1, "b"]), true],
        ["eq on arrays in another order", { a: [1, "b"] }, one("a", "eq", ["b", 1]), false],
        ["eq on null", { a: null }, one("a", "eq", null), true],
        ["eq on true and the string true", { a: true }, one("a", "eq", "true"), false],
        ["eq on a BigNumber", { a: Utils.BigNumber.make(ABOVE_2_64) }, one("a", "eq", ABOVE_2_64), true],
        ["eq on a buffer, as hex", { a: Buffer.from("ab", "hex") }, one("a", "eq", "ab"), true],
        ["ne on different values", { a: 1 }, one("a", "ne", 2), true],
        ["ne on equal values", { a: "1" }, one("a", "ne", 1), false],
        ["ne on a missing key", {}, one("a", "ne", 1), false],
        // gt / gte / lt / lte: exact at any size
        ["gt above 2^64 by one", { a: ABOVE_2_64 }, one("a", "gt", "18446744073709551616"), true],
        ["gt equal above 2^64", { a: ABOVE_2_64 }, one("a", "gt", ABOVE_2_64), false],
        ["gte equal above 2^64", { a: ABOVE_2_64 }, one("a", "gte", ABOVE_2_64), true],
        ["lt with a BigNumber", { a: Utils.BigNumber.make("999") }, one("a", "lt", 1000), true],
        ["lte with a decimal bound", { a: "10" }, one("a", "lte", "10.0001"), true],
        ["lt with a decimal bound", { a: "10" }, one("a", "lt", "9.9999"), false],
        ["gt with negative numbers", { a: -5 }, one("a", "gt", -6), true],
        ["gt on a non-numeric string", { a: "abc" }, one("a", "gt", 1), false],
        ["gt on a boolean", { a: true }, one("a", "gt", 0), false],
        ["gt on null", { a: null }, one("a", "gt", 0), false],
        ["gt on a missing key", {}, one("a", "gt", 0), false],
        ["lt on an object", { a: { b: 1 } }, one("a", "lt", 5), false],
        // between / not-between: strict bounds, like ARK's plugin
        ["between inside", { a: "5" }, one("a", "between", { min: 1, max: 10 }), true],
        ["between on the lower bound", { a: 1 }, one("a", "between", { min: 1, max: 10 }), false],
        ["between on the upper bound", { a: 10 }, one("a", "between", { min: 1, max: 10 }), false],
        ["between with decimal bounds", { a: "1" }, one("a", "between", { min: "0.5", max: "1.5" }), true],
        [
            "between above 2^64",
            { a: ABOVE_2_64 },
            one("a", "between", { min: "18446744073709551616", max: "18446744073709551618" }),
            true,
        ],
        ["not-between outside", { a: 11 }, one("a", "not-between", { min: 1, max: 10 }), true],
        ["not-between on a bound", { a: 10 }, one("a", "not-between", { min: 1, max: 10 }), true],
        ["not-between inside", { a: 5 }, one("a", "not-between", { min: 1, max: 10 }), false],
        ["not-between on a non-number", { a: "x" }, one("a", "not-between", { min: 1, max: 10 }), false],
        ["between on a missing key", {}, one("a", "between", { min: 1, max: 10 }), false],
        // contains: strings and arrays
        ["contains in a string", { a: "hello world" }, one("a", "contains", "lo w"), true],
        ["contains absent from a string", { a: "hello" }, one("a", "contains", "bye"), false],
        ["contains a number in a string", { a: "tx-42" }, one("a", "contains", 42), true],
        ["contains in an array", { a: ["+key", "-other"] }, one("a", "contains", "+key"), true],
        ["contains a number in an array of strings", { a: ["1", "2"] }, one("a", "contains", 2), true],
        ["contains absent from an array", { a: ["x"] }, one("a", "contains", "y"), false],
        ["contains on a number", { a: 12345 }, one("a", "contains", "23"), false],
        ["contains on null", { a: null }, one("a", "contains", "x"), false],
        // truthy / falsy
        ["truthy on true", { a: true }, one("a", "truthy"), true],
        ["truthy on the string TRUE", { a: " TRUE " }, one("a", "truthy"), true],
        ["truthy on false", { a: false }, one("a", "truthy"), false],
        ["truthy on 1", { a: 1 }, one("a", "truthy"), false],
        ["falsy on false", { a: false }, one("a", "falsy"), true],
        ["falsy on the string false", { a: "false" }, one("a", "falsy"), true],
        ["falsy on null", { a: null }, one("a", "falsy"), true],
        ["falsy on true", { a: true }, one("a", "falsy"), false],
        ["falsy on a missing key", {}, one("a", "falsy"), false],
        ["truthy on a missing key", {}, one("a", "truthy"), false],
        // regexp
        ["regexp matching", { a: "AG3J2HrvECHzTcLHcRpJxtN7vR7Z46sGpA" }, one("a", "regexp", "^AG3J"), true],
        ["regexp not matching", { a: "abc" }, one("a", "regexp", "^b"), false],
        ["regexp on a number", { a: 12345 }, one("a", "regexp", "^123"), true],
        ["regexp on an object", { a: { b: "c" } }, one("a", "regexp", "c"), false],
        [
            "regexp that backtracks exponentially elsewhere",
            { a: "a".repeat(28) + "!" },
            one("a", "regexp", "(a+)+$"),
            false,
        ],
        // paths
        ["a dot path", { transaction: { recipientId: "A1" } }, one("transaction.recipientId", "eq", "A1"), true],
        ["an array index in a path", { asset: { votes: ["+k"] } }, one("asset.votes.0", "eq", "+k"), true],
        ["a property whose own name holds a dot", { "a.b": 1, a: { b: 2 } }, one("a.b", "eq", 1), true],
        ["a path through null", { a: null }, one("a.b", "eq", null), false],
        ["a path through a string", { a: "text" }, one("a.length", "eq", 4), false],
        ["the prototype is not reachable", {}, one("constructor", "truthy"), false],
        ["a payload that is not an object", "just a string", one("a", "eq", "x"), false],
        ["an undefined payload", undefined, one("a", "falsy"), false],
    ])("%s", (_name, payload, conditions, expected) => {
        expect(matches(payload, conditions)).toBe(expected);
    });

    it("fires on any true condition by default, the interface's rule", () => {
        const conditions: Condition[] = [
            { key: "a", condition: "eq", value: 1 },
            { key: "b", condition: "eq", value: 2 },
        ];

        expect(matches({ a: 1, b: 0 }, conditions)).toBe(true);
        expect(matches({ a: 0, b: 0 }, conditions)).toBe(false);
    });

    it("needs every condition with match 'all'", () => {
        const conditions: Condition[] = [
            { key: "a", condition: "eq", value: 1 },
            { key: "b", condition: "eq", value: 2 },
        ];

        expect(matches({ a: 1, b: 2 }, conditions, "all")).toBe(true);
        expect(matches({ a: 1, b: 0 }, conditions, "all")).toBe(false);
    });

    it("fires on every event of its name when it has no conditions", () => {
        expect(matches(undefined, [])).toBe(true);
    });

    it("is false, not a crash, when reading the payload throws", () => {
        const payload = Object.defineProperty({}, "a", {
            enumerable: true,
            get: () => {
                throw new Error("boom");
            },
        });

        expect(matches(payload, one("a", "eq", 1))).toBe(false);
    });

    it("refuses to compile a condition RE2 cannot run, and holds none of its patterns", () => {
        const regexps = new RegexpPool(100);
        const conditions = [one("a", "regexp", "x+"), one("a", "regexp", "(a)\\1")].flat();

        expect(() => compileMatcher(conditions, "any", { regexpInputChars: 1024, regexps })).toThrow(
            /invalid escape sequence/,
        );
        expect(regexps.size).toBe(0);
    });
});

describe("conditions on real payloads of a 3.9.1 node", () => {
    const transfer = samples["transaction.applied"].samples["typeGroup1/type0"];
    const vote = samples["wallet.vote"].samples.default;
    const block = samples["block.applied"].samples.default;

    it.each<[string, unknown, Condition[], boolean]>([
        ["a transfer to an address", transfer, one("recipientId", "eq", transfer.recipientId), true],
        [
            "a transfer to another address",
            transfer,
            one("recipientId", "eq", "AXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"),
            false,
        ],
        ["a transfer of at least 100 ARK", transfer, one("amount", "gte", "10000000000"), true],
        ["a transfer with a vendor field", transfer, one("vendorField", "truthy"), false],
        ["a transfer's vendor field text", transfer, one("vendorField", "contains", "rob"), true],
        ["a vote for a delegate", vote, one("transaction.asset.votes", "contains", vote.delegate), true],
        ["a vote's delegate by pattern", vote, one("delegate", "regexp", "^\\+03287b"), true],
        ["a block at height 2", block, one("height", "eq", 2), true],
        ["a block with transactions", block, one("numberOfTransactions", "gt", 0), false],
        ["a block's generator", block, one("generatorPublicKey", "eq", block.generatorPublicKey), true],
    ])("%s", (_name, payload, conditions, expected) => {
        expect(matches(payload, conditions)).toBe(expected);
    });
});
