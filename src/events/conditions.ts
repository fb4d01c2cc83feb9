import { Condition, ConditionName } from "../contracts";
import { compareDecimals, Decimal, toDecimal } from "./decimal";
import { toPlainValue, valuesEqual } from "./normalise";
import { RegexpPool } from "./regexp-pool";

/** A condition's test of one payload value; the value is never missing (missing keys are false). */
export type ValueTest = (actual: unknown) => boolean;

export interface ConditionOptions {
    /** Longest string a regexp condition tests; a longer value does not match (see regexp-budget.ts). */
    regexpInputChars: number;
    /** Where regexp conditions get their compiled pattern; a matcher releases it when dropped. */
    regexps: RegexpPool;
}

/** Turns a validated condition value into a test; all parsing happens here, once, at creation. */
type ConditionCompiler = (expected: unknown, options: ConditionOptions) => ValueTest;

const isTrue = (value: unknown): boolean => {
    const plain = toPlainValue(value);
    return plain === true || (typeof plain === "string" && plain.trim().toLowerCase() === "true");
};

const compareWith =
    (accept: (order: -1 | 0 | 1) => boolean): ConditionCompiler =>
    (expected) => {
        const bound = toDecimal(expected);
        return (actual) => {
            const value = toDecimal(toPlainValue(actual));
            return bound !== undefined && value !== undefined && accept(compareDecimals(value, bound));
        };
    };

const readBounds = (expected: unknown): { min?: Decimal; max?: Decimal } => {
    const bounds = (expected ?? {}) as { min?: unknown; max?: unknown };
    return { min: toDecimal(bounds.min), max: toDecimal(bounds.max) };
};

const isStrictlyBetween = (value: Decimal, min: Decimal, max: Decimal): boolean =>
    compareDecimals(value, min) > 0 && compareDecimals(value, max) < 0;

const betweenTest =
    (inside: boolean): ConditionCompiler =>
    (expected) => {
        const { min, max } = readBounds(expected);
        return (actual) => {
            const value = toDecimal(toPlainValue(actual));
            if (!value || !min || !max) {
                return false;
            }
            return isStrictlyBetween(value, min, max) === inside;
        };
    };

export const CONDITIONS: Record<ConditionName, ConditionCompiler> = {
    eq: (expected) => (actual) => valuesEqual(actual, expected),
    ne: (expected) => (actual) => !valuesEqual(actual, expected),
    gt: compareWith((order) => order > 0),
    gte: compareWith((order) => order >= 0),
    lt: compareWith((order) => order < 0),
    lte: compareWith((order) => order <= 0),
    between: betweenTest(true),
    "not-between": betweenTest(false),
    contains: (expected) => (actual) => {
        const plain = toPlainValue(actual);
        if (typeof plain === "string") {
            const needle = toPlainValue(expected);
            return (typeof needle === "string" || typeof needle === "number") && plain.includes(String(needle));
        }
        return Array.isArray(plain) && plain.some((item) => valuesEqual(item, expected));
    },
    regexp: (expected, { regexpInputChars, regexps }) => {
        // RE2 is linear in the input; the input is bounded too, so one test's time has a ceiling.
        const expression = regexps.acquire(String(expected));
        return (actual) => {
            const plain = toPlainValue(actual);
            if (typeof plain !== "string" && typeof plain !== "number") {
                return false;
            }
            const text = String(plain);
            return text.length <= regexpInputChars && expression.test(text);
        };
    },
    truthy: () => (actual) => isTrue(actual),
    falsy: () => (actual) => !isTrue(actual),
};

export const compileCondition = (condition: Condition, options: ConditionOptions): ValueTest =>
    CONDITIONS[condition.condition](condition.value, options);
