import { Utils } from "@arkecosystem/crypto";

import { WalletResource } from "@arkecosystem/core-api/dist/resources-new";

export type WalletFilter = (wallet: WalletResource) => boolean;

type AmountField = "balance" | "nonce";
const AMOUNT_FIELDS: readonly string[] = ["balance", "nonce"];

const toBigInt = (value: unknown): bigint | undefined => {
    try {
        if (value instanceof Utils.BigNumber) {
            return value.toBigInt();
        }
        if (typeof value === "string" || typeof value === "number" || typeof value === "bigint") {
            return BigInt(value);
        }
    } catch {
        return undefined;
    }
    return undefined;
};

/** The wallet's balance or nonce: a BigNumber on the node's thread, a bigint in the wallet thread. */
const amountOf = (wallet: WalletResource, field: AmountField): bigint => {
    const value: unknown = wallet[field];
    return typeof value === "bigint" ? value : (value as Utils.BigNumber).toBigInt();
};

const compileAmount = (field: AmountField, criterion: unknown): WalletFilter | undefined => {
    if (Array.isArray(criterion)) {
        // A list of criteria is an OR, as core-api's schemas produce for every field.
        const alternatives = criterion.map((item: unknown) => compileAmount(field, item));
        if (alternatives.length === 0 || alternatives.some((alternative) => alternative === undefined)) {
            return undefined;
        }
        return (wallet) => alternatives.some((alternative) => alternative?.(wallet));
    }
    const exact = toBigInt(criterion);
    if (exact !== undefined) {
        return (wallet) => amountOf(wallet, field) === exact;
    }
    if (criterion === null || typeof criterion !== "object" || Array.isArray(criterion)) {
        return undefined;
    }
    const keys = Object.keys(criterion);
    if (keys.length === 0 || keys.some((key) => key !== "from" && key !== "to")) {
        return undefined;
    }
    const { from, to } = criterion as { from?: unknown; to?: unknown };
    const min = "from" in criterion ? toBigInt(from) : undefined;
    const max = "to" in criterion ? toBigInt(to) : undefined;
    if (("from" in criterion && min === undefined) || ("to" in criterion && max === undefined)) {
        return undefined;
    }
    return (wallet) => {
        const value = amountOf(wallet, field);
        return (min === undefined || value >= min) && (max === undefined || value <= max);
    };
};

/**
 * The criteria most listings use (`balance`, `nonce`: exact, from, to) compiled once into native
 * bigint comparisons, with the meaning core-kernel's StandardCriteriaService gives them. Any other
 * criteria returns undefined and is left to that service.
 */
export const compileWalletFilter = (criteria: unknown): WalletFilter | undefined => {
    if (criteria === null || typeof criteria !== "object" || Array.isArray(criteria)) {
        return undefined;
    }
    const tests: WalletFilter[] = [];
    for (const [field, criterion] of Object.entries(criteria)) {
        const test = AMOUNT_FIELDS.includes(field) ? compileAmount(field as AmountField, criterion) : undefined;
        if (!test) {
            return undefined;
        }
        tests.push(test);
    }
    return (wallet) => tests.every((test) => test(wallet));
};
