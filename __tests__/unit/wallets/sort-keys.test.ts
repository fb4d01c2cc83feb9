import { Contracts } from "@arkecosystem/core-kernel";
import { Utils } from "@arkecosystem/crypto";

import { UNDECIDED, WalletListOrder } from "../../../src/wallets/sort-keys";
import { compareLikeCoreApi } from "../../../src/wallets/wallet-order";

interface Item {
    values: Record<string, unknown>;
    sequence: number;
}

/** A deterministic source of values near the edges each kind has. */
const pick = <T>(random: () => number, choices: readonly T[]): T => choices[Math.floor(random() * choices.length)];

const randomSource = (seed: number): (() => number) => {
    let state = seed;
    return () => {
        state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
        return state / 2_147_483_648;
    };
};

const BIG = [
    "0",
    "1",
    "-1",
    "9007199254740991",
    "9007199254740992",
    "9007199254740993",
    "-9007199254740993",
    "123456789012345678901234567890",
    "123456789012345678901234567891",
    "1" + "0".repeat(320),
    "1" + "0".repeat(320) + "1",
    "-" + "9".repeat(330),
];
const STRINGS = [
    "",
    "a",
    "ab",
    "abc",
    "abcdefg",
    "abcdefgh",
    "abcdefgi",
    "ABC",
    "é",
    "éa",
    "éz",
    "ü",
    "\u007f",
    "~~~~~~~~",
    "AUexKjGtgsSpVzPLs6jNMM6vJ6znEVTQWK",
    "AUexKjGtgsSpVzPLs6jNMM6vJ6znEVTQWL",
    "D6Z26L69gdk9qYmTv5uzk3uGepigtHY4ax",
];
const NUMBERS = [
    0,
    -0,
    1,
    -1,
    0.5,
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 60),
    1.7e308,
    1.75e308,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
];

const valueOf = (random: () => number, kind: string): unknown => {
    const roll = random();
    if (roll < 0.1) {
        return undefined;
    }
    if (roll < 0.2) {
        return null;
    }
    switch (kind) {
        case "BigNumber":
            return Utils.BigNumber.make(pick(random, BIG));
        case "bigint":
            return BigInt(pick(random, BIG));
        case "string":
            return pick(random, STRINGS);
        case "boolean":
            return random() < 0.5;
        default:
            return pick(random, NUMBERS);
    }
};

const itemsOf = (seed: number, kinds: Record<string, string>, count: number): Item[] => {
    const random = randomSource(seed);
    return Array.from({ length: count }, (_, sequence) => ({
        sequence,
        values: Object.fromEntries(
            Object.entries(kinds)
                .map(([property, kind]) => {
                    const value = valueOf(random, kind);
                    // A missing value is no property at all, as core-kernel's get() finds it.
                    return [property, value];
                })
                .filter(([, value]) => value !== undefined || random() < 0.5),
        ),
    }));
};

const orderOf = (sorting: Contracts.Search.Sorting): WalletListOrder<Item> => {
    const exact = compareLikeCoreApi<Record<string, unknown>>(sorting);
    return new WalletListOrder<Item>(
        sorting,
        (item) => item.values,
        (item) => item.sequence,
        (left, right) => exact(left.values, right.values) || left.sequence - right.sequence,
    );
};

const keysOf = (order: WalletListOrder<Item>, items: Item[]): Float64Array => {
    const keys = new Float64Array(items.length * order.stride);
    items.forEach((item, index) => order.keysOf(item, keys, index * order.stride));
    return keys;
};

describe("WalletListOrder", () => {
    it.each<[string, Record<string, string>, Contracts.Search.Sorting]>([
        ["BigNumbers ascending", { balance: "BigNumber" }, [{ property: "balance", direction: "asc" }]],
        ["BigNumbers descending", { balance: "BigNumber" }, [{ property: "balance", direction: "desc" }]],
        ["native bigints", { value: "bigint" }, [{ property: "value", direction: "desc" }]],
        [
            "strings, then numbers",
            { name: "string", rank: "number" },
            [
                { property: "name", direction: "asc" },
                { property: "rank", direction: "desc" },
            ],
        ],
        [
            "booleans, then strings descending",
            { resigned: "boolean", name: "string" },
            [
                { property: "resigned", direction: "asc" },
                { property: "name", direction: "desc" },
            ],
        ],
        [
            "a key sorted twice",
            { balance: "BigNumber" },
            [
                { property: "balance", direction: "asc" },
                { property: "balance", direction: "desc" },
            ],
        ],
    ])("never contradicts core-api's order (%s)", (_, kinds, sorting) => {
        const items = itemsOf(11, kinds, 300);
        const order = orderOf(sorting);
        const keys = keysOf(order, items);
        let decided = 0;
        const contradictions: string[] = [];
        for (let left = 0; left < items.length; left++) {
            for (let right = 0; right < items.length; right++) {
                const byKeys = order.compareKeys(keys, left * order.stride, keys, right * order.stride);
                const exact = Math.sign(order.compare(items[left], items[right]));
                if (byKeys !== UNDECIDED) {
                    decided++;
                    if (byKeys !== exact) {
                        contradictions.push(`${left} vs ${right}: numbers say ${byKeys}, core-api ${exact}`);
                    }
                }
            }
        }
        expect(contradictions.slice(0, 5)).toEqual([]);
        // The numbers decide most pairs: that is their point.
        expect(decided).toBeGreaterThan(items.length * items.length * 0.5);
    });

    it("puts null after every value and a missing value after null, whatever the direction", () => {
        for (const direction of ["asc", "desc"] as const) {
            const order = orderOf([{ property: "balance", direction }]);
            const items: Item[] = [
                { values: {}, sequence: 0 },
                { values: { balance: null }, sequence: 1 },
                { values: { balance: Utils.BigNumber.make("1" + "0".repeat(400)) }, sequence: 2 },
                { values: { balance: Utils.BigNumber.make("-" + "1".repeat(400)) }, sequence: 3 },
            ];
            const keys = keysOf(order, items);
            const at = (index: number) => index * order.stride;
            expect(order.compareKeys(keys, at(1), keys, at(0))).toBe(-1);
            expect(order.compareKeys(keys, at(2), keys, at(1))).toBe(-1);
            expect(order.compareKeys(keys, at(3), keys, at(1))).toBe(-1);
        }
    });

    it("leaves every pair to the items once a key has met two kinds, so core-api's error is thrown as core-api throws it", () => {
        const order = orderOf([{ property: "rank", direction: "asc" }]);
        const items: Item[] = [
            { values: { rank: 1 }, sequence: 0 },
            { values: { rank: 2 }, sequence: 1 },
            { values: { rank: "3" }, sequence: 2 },
        ];
        const keys = new Float64Array(3 * order.stride);
        order.keysOf(items[0], keys, 0);
        order.keysOf(items[1], keys, order.stride);
        expect(order.compareKeys(keys, 0, keys, order.stride)).toBe(-1);
        order.keysOf(items[2], keys, 2 * order.stride);
        expect(order.compareKeys(keys, 0, keys, order.stride)).toBe(UNDECIDED);
        expect(() => order.compare(items[1], items[2])).toThrow("Mismatched types 'number' and 'string' at 'rank'");
    });
});
