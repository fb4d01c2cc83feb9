import { Contracts, Utils as KernelUtils } from "@arkecosystem/core-kernel";
import { Utils } from "@arkecosystem/crypto";

type Comparable = string | number | boolean | bigint | Utils.BigNumber | null | undefined;

const compareValues = (a: Comparable, b: Comparable, property: string): -1 | 0 | 1 => {
    if (
        (typeof a === "boolean" && typeof b === "boolean") ||
        (typeof a === "string" && typeof b === "string") ||
        (typeof a === "number" && typeof b === "number") ||
        (typeof a === "bigint" && typeof b === "bigint")
    ) {
        return a < b ? -1 : a > b ? 1 : 0;
    }
    if (a instanceof Utils.BigNumber && b instanceof Utils.BigNumber) {
        return a.isLessThan(b) ? -1 : a.isGreaterThan(b) ? 1 : 0;
    }
    throw new Error(
        typeof a !== typeof b
            ? `Mismatched types '${typeof a}' and '${typeof b}' at '${property}'`
            : `Unexpected type at '${property}'`,
    );
};

/**
 * Compares two items exactly as core-kernel's PaginationService orders a page (missing and null
 * values last whatever the direction); equal items compare 0, and the caller breaks the tie by
 * the items' order in the repository, as core-api's stable sort keeps it.
 */
const DISALLOWED_SEGMENTS = ["__proto__", "prototype", "constructor"];

/**
 * A reader of one dotted property path, split once, with core-kernel's get() semantics (each step
 * an enumerable own or inherited property; null or undefined midway gives undefined): get() splits
 * the path again on every call, which dominated sorting. Paths get() refuses keep get().
 */
export const pathReader = (property: string): ((item: unknown) => Comparable) => {
    const segments = property.split(".");
    if (segments.some((segment) => DISALLOWED_SEGMENTS.includes(segment))) {
        return (item) => KernelUtils.get<unknown, Comparable>(item, property);
    }
    return (item) => {
        let value: unknown = item;
        for (const segment of segments) {
            if (value === null || value === undefined || !Object.prototype.propertyIsEnumerable.call(value, segment)) {
                return undefined;
            }
            value = (value as Record<string, unknown>)[segment];
        }
        return value as Comparable;
    };
};

export const compareLikeCoreApi = <T>(sorting: Contracts.Search.Sorting): ((left: T, right: T) => number) => {
    const keys = sorting.map(({ property, direction }) => ({
        property,
        read: pathReader(property),
        desc: direction === "desc",
    }));
    return (left, right) => {
        for (const { property, read, desc } of keys) {
            const a = read(left);
            const b = read(right);
            if (a === undefined || b === undefined) {
                if (a === b) continue;
                return a === undefined ? 1 : -1;
            }
            if (a === null || b === null) {
                if (a === b) continue;
                return a === null ? 1 : -1;
            }
            const order = desc ? compareValues(b, a, property) : compareValues(a, b, property);
            if (order !== 0) {
                return order;
            }
        }
        return 0;
    };
};
