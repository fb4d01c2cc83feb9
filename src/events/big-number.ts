/** A big-number object of a payload (ARK's BigNumber, bignumber.js): it has toFixed, and is no Number. */
export const isBigNumberLike = (value: unknown): value is { toString(): string } =>
    value !== null &&
    typeof value === "object" &&
    typeof (value as { toFixed?: unknown }).toFixed === "function" &&
    !(value instanceof Number);
