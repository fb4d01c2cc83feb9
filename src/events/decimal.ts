import { isBigNumberLike } from "./big-number";

/** An exact decimal: `digits × 10^-scale`. JavaScript numbers lose integers above 2^53; this does not. */
export interface Decimal {
    digits: bigint;
    scale: number;
}

const DECIMAL_PATTERN = /^([+-]?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
const MAX_EXPONENT = 400;

const parseDecimalString = (text: string): Decimal | undefined => {
    const match = DECIMAL_PATTERN.exec(text.trim());
    if (!match) {
        return undefined;
    }
    const [, sign, whole, fraction = "", exponentText = "0"] = match;
    const exponent = Number(exponentText);
    if (Math.abs(exponent) > MAX_EXPONENT) {
        return undefined;
    }
    let digits = BigInt(`${sign}${whole}${fraction}`);
    let scale = fraction.length - exponent;
    if (scale < 0) {
        digits *= 10n ** BigInt(-scale);
        scale = 0;
    }
    return { digits, scale };
};

/**
 * Reads numbers, bigints, numeric strings and big-number objects (ARK's and bignumber.js's) exactly.
 * Anything else is not a number and yields undefined.
 */
export const toDecimal = (value: unknown): Decimal | undefined => {
    switch (typeof value) {
        case "number":
            return Number.isFinite(value) ? parseDecimalString(String(value)) : undefined;
        case "bigint":
            return { digits: value, scale: 0 };
        case "string":
            return value.trim() === "" ? undefined : parseDecimalString(value);
        case "object":
            return isBigNumberLike(value) ? parseDecimalString(value.toString()) : undefined;
        default:
            return undefined;
    }
};

export const compareDecimals = (left: Decimal, right: Decimal): -1 | 0 | 1 => {
    const scale = Math.max(left.scale, right.scale);
    const a = left.digits * 10n ** BigInt(scale - left.scale);
    const b = right.digits * 10n ** BigInt(scale - right.scale);
    return a < b ? -1 : a > b ? 1 : 0;
};
