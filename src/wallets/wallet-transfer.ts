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

/** The value `toTransferable` was made from: every bigint a BigNumber again. */
export const fromTransferable = (value: unknown): unknown => {
    if (typeof value === "bigint") {
        return Utils.BigNumber.make(value);
    }
    if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index++) {
            value[index] = fromTransferable(value[index]);
        }
        return value;
    }
    if (value !== null && typeof value === "object") {
        const record = value as Record<string, unknown>;
        for (const key of Object.keys(record)) {
            record[key] = fromTransferable(record[key]);
        }
    }
    return value;
};

/** The wallet as core-api lists it, at this moment, ready to cross to the wallet thread. */
export const transferWallet = (wallet: Contracts.State.Wallet): TransferredWallet =>
    toTransferable({
        address: wallet.getAddress(),
        publicKey: wallet.getPublicKey(),
        balance: wallet.getBalance(),
        nonce: wallet.getNonce(),
        attributes: wallet.getAttributes(),
    });

export const receiveWallet = (wallet: TransferredWallet): WalletResource => fromTransferable(wallet) as WalletResource;
