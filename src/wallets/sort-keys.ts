import { Contracts } from "@arkecosystem/core-kernel";
import { Utils } from "@arkecosystem/crypto";

import { pathReader } from "./wallet-order";

/** What compareKeys answers when the numbers cannot tell and the items must be compared. */
export const UNDECIDED = 2;

/**
 * Numbers drawn from items, `stride` per item, beside a list's chunks and in the scratch a list is
 * sorted in: a plain array of doubles, which V8 keeps unboxed in one object of the heap that its
 * collector copies as bytes and marks without reading. Not a typed array: V8 counts a typed array's
 * memory as external, and every 64 MB of it allocated since the heap's last full collection starts
 * a marking of the whole heap ("external memory pressure"). A million wallets' lists keep some 30 MB
 * of numbers each: in typed arrays, one first listing of four orders started three markings of the
 * wallet thread's half-gigabyte heap (`--trace-incremental-marking`), each about a second of V8's
 * helper threads, which the node's thread shares at its own priority.
 */
export type KeyNumbers = number[];

/** Room for `length` numbers, held as doubles from the start (its first value is not an integer). */
export const keyRoom = (length: number): KeyNumbers => new Array<number>(length).fill(0.5);

/** Where numbers are written and compared: KeyNumbers, or a typed array. */
export interface KeyRow {
    [index: number]: number;
    readonly length: number;
}

/**
 * How a list orders its items: first by numbers drawn from each item once and kept beside it in
 * the list (contiguous, so a binary search over a million wallets reads a few cache lines instead
 * of chasing four pointers per comparison), then by the items themselves where the numbers are
 * equal but not exact.
 */
export interface ListOrder<T> {
    /** Numbers per item. */
    readonly stride: number;
    /** Writes the item's `stride` numbers into `into` from `at`. */
    keysOf(item: T, into: KeyRow, at: number): void;
    /** -1, 0 or 1 by the numbers at `leftAt` and `rightAt`, or UNDECIDED. */
    compareKeys(left: KeyRow, leftAt: number, right: KeyRow, rightAt: number): number;
    /** The exact order (core-api's). */
    compare(left: T, right: T): number;
}

// At most this many sort keys are drawn as numbers (the inexact flags of an item are one int32).
const MAX_KEYS = 8;
// Strings: the first 7 UTF-16 units in base 129 (0 for "no more", 1..127 for units below 127, and
// 128 for any unit from 127 up, after which the rest is left out): 129^7 < 2^53, so exact.
const STRING_UNITS = 7;
const STRING_BASE = 129;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
// Values are kept within ±TOP, so that null (MAX_VALUE) and a missing value (Infinity) sort after
// every value, whatever the direction, as core-kernel puts them; a value cut to TOP is not exact.
const TOP = 1.7e308;
const NULL = Number.MAX_VALUE;
const MISSING = Number.POSITIVE_INFINITY;

type Kind = "number" | "string" | "boolean" | "bigint" | "BigNumber";

const kindOf = (value: unknown): Kind | "null" | undefined => {
    // Primitives first: the wallet thread's values are bigints, and an instanceof per value drawn
    // showed in a patch's profile.
    const type = typeof value;
    if (type === "bigint" || type === "string" || type === "boolean") {
        return type;
    }
    if (type === "number") {
        return Number.isNaN(value) ? undefined : "number";
    }
    if (value === undefined || value === null) {
        return "null";
    }
    return value instanceof Utils.BigNumber ? "BigNumber" : undefined;
};

/**
 * The number drawn from a value and whether it stands for the value alone; one object, filled by
 * `draw` for each value (a million wallets drawn in a slice should not leave a million objects).
 */
const drawn = { approximation: 0, exact: true };

const drawString = (value: string): void => {
    let approximation = 0;
    let exact = value.length <= STRING_UNITS;
    let cut = false;
    for (let index = 0; index < STRING_UNITS; index++) {
        let digit = 0;
        if (!cut && index < value.length) {
            const unit = value.charCodeAt(index);
            digit = unit < 127 ? unit + 1 : 128;
            if (unit >= 127) {
                cut = true;
                exact = false;
            }
        }
        approximation = approximation * STRING_BASE + digit;
    }
    drawn.approximation = approximation;
    drawn.exact = exact;
};

const drawBigInt = (value: bigint): void => {
    // Number() rounds to the nearest double, so the order of two different numbers never inverts.
    drawn.approximation = Number(value);
    drawn.exact = value <= MAX_SAFE && value >= -MAX_SAFE;
};

/**
 * A number ordered as the value is among values of its kind (ties allowed), within ±TOP, and
 * whether it stands for the value alone. Kinds are never mixed within one key: see `mixed`.
 */
const draw = (value: unknown, kind: Kind): void => {
    switch (kind) {
        case "BigNumber":
            drawBigInt((value as Utils.BigNumber).toBigInt());
            break;
        case "bigint":
            drawBigInt(value as bigint);
            break;
        case "string":
            drawString(value as string);
            break;
        case "boolean":
            drawn.approximation = value ? 1 : 0;
            drawn.exact = true;
            break;
        case "number":
            drawn.approximation = value as number;
            drawn.exact = true;
            break;
    }
    if (!(Math.abs(drawn.approximation) <= TOP)) {
        drawn.approximation = Math.sign(drawn.approximation) * TOP;
        drawn.exact = false;
    }
};

/**
 * The order of core-api's wallet listings (`compare`, exact) with numbers drawn from each item:
 * per sort key its value's approximation (negated when descending; null and missing values after
 * every value whatever the direction, as core-kernel puts them last), then a
 * mask of the keys whose approximation is not exact, then the item's sequence (core-api's tie-break).
 *
 * core-kernel throws when one key holds values of two kinds (a string and a BigNumber); numbers of
 * different kinds would order them silently, so once a key has met two kinds the order compares
 * items only, and throws as core-api does.
 */
export class WalletListOrder<T> implements ListOrder<T> {
    public readonly stride: number;
    private readonly keys: { read: (item: unknown) => unknown; descending: boolean }[];
    private readonly kinds: (Kind | undefined)[];
    private readonly allKeysDrawn: boolean;
    private mixed = false;

    public constructor(
        sorting: Contracts.Search.Sorting,
        private readonly valuesOf: (item: T) => unknown,
        private readonly sequenceOf: (item: T) => number,
        public readonly compare: (left: T, right: T) => number,
    ) {
        // A property sorted twice decides nothing the second time.
        const properties = [...new Set(sorting.map(({ property }) => property))];
        const drawn = properties.slice(0, MAX_KEYS);
        this.keys = drawn.map((property) => ({
            read: pathReader(property),
            descending: sorting.find((key) => key.property === property)?.direction === "desc",
        }));
        this.kinds = drawn.map(() => undefined);
        this.allKeysDrawn = drawn.length === properties.length;
        this.stride = this.keys.length + 2;
    }

    public keysOf(item: T, into: KeyRow, at: number): void {
        const values = this.valuesOf(item);
        let inexact = 0;
        for (let index = 0; index < this.keys.length; index++) {
            const { read, descending } = this.keys[index];
            const value = read(values);
            const kind = kindOf(value);
            if (kind === "null") {
                into[at + index] = value === null ? NULL : MISSING;
                continue;
            }
            if (kind === undefined || (this.kinds[index] !== undefined && this.kinds[index] !== kind)) {
                this.mixed = true;
                into[at + index] = 0;
                continue;
            }
            this.kinds[index] = kind;
            draw(value, kind);
            into[at + index] = descending ? -drawn.approximation : drawn.approximation;
            if (!drawn.exact) {
                inexact |= 1 << index;
            }
        }
        into[at + this.keys.length] = inexact;
        into[at + this.keys.length + 1] = this.sequenceOf(item);
    }

    public compareKeys(left: KeyRow, leftAt: number, right: KeyRow, rightAt: number): number {
        if (this.mixed) {
            return UNDECIDED;
        }
        const count = this.keys.length;
        const inexact = left[leftAt + count] | right[rightAt + count];
        for (let index = 0; index < count; index++) {
            const a = left[leftAt + index];
            const b = right[rightAt + index];
            if (a < b) {
                return -1;
            }
            if (a > b) {
                return 1;
            }
            if ((inexact >> index) & 1) {
                return UNDECIDED;
            }
        }
        if (!this.allKeysDrawn) {
            return UNDECIDED;
        }
        const sequence = left[leftAt + count + 1] - right[rightAt + count + 1];
        return sequence < 0 ? -1 : sequence > 0 ? 1 : 0;
    }
}
