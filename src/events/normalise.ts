import { isBigNumberLike } from "./big-number";
import { toDecimal } from "./decimal";

/**
 * Turns a payload value into plain JSON data: big numbers become integer strings and buffers hex,
 * the way deliveries carry them, so that conditions compare what a receiver will see.
 */
export const toPlainValue = (value: unknown): unknown => {
    if (typeof value === "bigint") {
        return value.toString();
    }
    if (value === null || typeof value !== "object") {
        return value;
    }
    if (Buffer.isBuffer(value)) {
        return value.toString("hex");
    }
    if (isBigNumberLike(value)) {
        return value.toString();
    }
    return value;
};

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
    value !== null && typeof value === "object" && !Array.isArray(value);

/** Equality of values, not of their JSON spelling: key order does not matter, 1 equals "1.0". */
export const valuesEqual = (left: unknown, right: unknown): boolean => {
    const a = toPlainValue(left);
    const b = toPlainValue(right);
    if (a === b) {
        return true;
    }
    const numberA = typeof a === "boolean" ? undefined : toDecimal(a);
    const numberB = typeof b === "boolean" ? undefined : toDecimal(b);
    if (numberA && numberB) {
        return (
            numberA.digits * 10n ** BigInt(Math.max(0, numberB.scale - numberA.scale)) ===
            numberB.digits * 10n ** BigInt(Math.max(0, numberA.scale - numberB.scale))
        );
    }
    if (Array.isArray(a) && Array.isArray(b)) {
        return a.length === b.length && a.every((item, index) => valuesEqual(item, b[index]));
    }
    if (isPlainObject(a) && isPlainObject(b)) {
        const keysA = Object.keys(a);
        const keysB = Object.keys(b);
        return (
            keysA.length === keysB.length &&
            keysA.every((key) => Object.prototype.hasOwnProperty.call(b, key) && valuesEqual(a[key], b[key]))
        );
    }
    return false;
};
