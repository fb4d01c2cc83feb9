import { WalletResource } from "@arkecosystem/core-api/dist/resources-new";
import { Contracts } from "@arkecosystem/core-kernel";
import { Utils } from "@arkecosystem/crypto";

/**
 * A wallet as it crosses between the node's thread and the wallet thread: core-api's resource,
 * with each BigNumber as a bigint (a structured clone keeps a bigint, but not a class). A wallet's
 * attributes hold plain objects, arrays, strings, numbers, booleans and BigNumbers.
 */
export type TransferredWallet = unknown;

const isPlain = (value: object): boolean => [Object.prototype, null].includes(Object.getPrototypeOf(value));

/** A copy of plain objects and arrays with every BigNumber as a bigint; anything else as it is. */
export const toTransferable = (value: unknown): unknown => {
    if (value instanceof Utils.BigNumber) {
        return value.toBigInt();
    }
    if (Array.isArray(value)) {
        return value.map(toTransferable);
    }
    if (value !== null && typeof value === "object" && isPlain(value)) {
        const copy: Record<string, unknown> = {};
        for (const key of Object.keys(value)) {
            copy[key] = toTransferable((value as Record<string, unknown>)[key]);
        }
        return copy;
    }
    return value;
};

/**
 * Rewrites a received value in place: where `swap` gives something else for a value, that takes
 * its place; otherwise arrays and objects are walked into.
 */
const swapInPlace = (value: unknown, swap: (value: unknown) => unknown): unknown => {
    const swapped = swap(value);
    if (swapped !== value) {
        return swapped;
    }
    if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index++) {
            value[index] = swapInPlace(value[index], swap);
        }
    } else if (value !== null && typeof value === "object") {
        const record = value as Record<string, unknown>;
        for (const key of Object.keys(record)) {
            record[key] = swapInPlace(record[key], swap);
        }
    }
    return value;
};

/** The value `toTransferable` was made from: every bigint a BigNumber again. */
export const fromTransferable = (value: unknown): unknown =>
    swapInPlace(value, (item) => (typeof item === "bigint" ? Utils.BigNumber.make(item) : item));

/**
 * crypto 3.9.1's BigNumber holds one own property, `value`, a bigint, so a structured clone makes
 * it `{ value: <bigint> }`. Where that holds, the node's thread posts its wallets' own objects and
 * the clone copies them outside its heap (nothing to collect afterwards); the wallet thread turns
 * each such object back into its bigint (`bigNumbersAsBigInts`).
 */
const BIG_NUMBER_CLONES_AS_VALUE = ((): boolean => {
    const keys = Object.keys(Utils.BigNumber.ONE);
    return keys.length === 1 && keys[0] === "value" && typeof Reflect.get(Utils.BigNumber.ONE, "value") === "bigint";
})();

/** The wallet as core-api lists it, at this moment, to be posted to the wallet thread at once. */
export const transferWallet = (wallet: Contracts.State.Wallet): TransferredWallet => {
    const resource = {
        address: wallet.getAddress(),
        publicKey: wallet.getPublicKey(),
        balance: wallet.getBalance(),
        nonce: wallet.getNonce(),
        attributes: wallet.getAttributes(),
    };
    return BIG_NUMBER_CLONES_AS_VALUE ? resource : toTransferable(resource);
};

/** In the wallet thread: a posted wallet, each BigNumber (cloned as `{ value }`) now its bigint. */
export const bigNumbersAsBigInts = (value: unknown): unknown =>
    swapInPlace(value, (item) => {
        if (item !== null && typeof item === "object" && !Array.isArray(item)) {
            const keys = Object.keys(item);
            const inner = (item as { value?: unknown }).value;
            if (keys.length === 1 && keys[0] === "value" && typeof inner === "bigint") {
                return inner;
            }
        }
        return item;
    });

export const receiveWallet = (wallet: TransferredWallet): WalletResource => fromTransferable(wallet) as WalletResource;
