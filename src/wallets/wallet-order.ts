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
 * Sorts items exactly as core-kernel's PaginationService orders a page (missing and null values
 * last whatever the direction, ties kept in their original order), so that a page cut from the
 * result equals core-api's page for the same query.
 */
export const sortLikeCoreApi = <T>(items: readonly T[], sorting: Contracts.Search.Sorting): T[] => {
    const keys = sorting.map(({ property, direction }) => ({ property, desc: direction === "desc" }));
    const indexed = items.map((item, index) => ({ item, index }));
    indexed.sort((left, right) => {
        for (const { property, desc } of keys) {
            const a = KernelUtils.get<unknown, Comparable>(left.item, property);
            const b = KernelUtils.get<unknown, Comparable>(right.item, property);
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
        return left.index - right.index;
    });
    return indexed.map(({ item }) => item);
};
