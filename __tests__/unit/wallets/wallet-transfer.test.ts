import { Utils } from "@arkecosystem/crypto";
import { MessageChannel } from "worker_threads";

import { Contracts } from "@arkecosystem/core-kernel";

import {
    bigNumbersAsBigInts,
    fromTransferable,
    toTransferable,
    transferWallet,
} from "../../../src/wallets/wallet-transfer";

/** What a structured clone (postMessage to another thread) makes of a value. */
const acrossThreads = (value: unknown): Promise<unknown> =>
    new Promise((resolve) => {
        const { port1, port2 } = new MessageChannel();
        port2.once("message", (received: unknown) => {
            port1.close();
            port2.close();
            resolve(received);
        });
        port1.postMessage(value);
    });

describe("a wallet crossing to the wallet thread", () => {
    const wallet = {
        address: "AYzyUFvKgHtNnJHfJLVBJgxxBwC8mjyn4q",
        publicKey: undefined,
        balance: Utils.BigNumber.make("1000000000000000000379"),
        nonce: Utils.BigNumber.make(17),
        attributes: {
            delegate: { username: "genesis_1", voteBalance: Utils.BigNumber.make(-5), rank: 3, resigned: false },
            htlc: { locks: { abc: { amount: Utils.BigNumber.ZERO, expiration: { type: 1, value: 9 } } } },
            ipfs: { hashes: { Qm: true } },
            list: [Utils.BigNumber.ONE, "two", null],
        },
    };

    it("comes back equal, with every BigNumber a BigNumber again", async () => {
        const received = fromTransferable(await acrossThreads(toTransferable(wallet))) as typeof wallet;

        expect(received).toEqual(wallet);
        expect(received.balance).toBeInstanceOf(Utils.BigNumber);
        expect(received.balance.toFixed()).toBe("1000000000000000000379");
        expect(received.attributes.delegate.voteBalance).toBeInstanceOf(Utils.BigNumber);
        expect(received.attributes.delegate.voteBalance.toFixed()).toBe("-5");
        expect(received.attributes.list[0]).toBeInstanceOf(Utils.BigNumber);
        expect("publicKey" in received).toBe(true);
    });

    it("is a copy: changing the wallet afterwards changes nothing sent", () => {
        const attributes: Record<string, unknown> = { vote: "02ab", delegate: { rank: 1 } };
        const sent = toTransferable({ attributes }) as { attributes: { delegate: { rank: number } } };
        (attributes.delegate as { rank: number }).rank = 2;
        attributes.vote = "03cd";

        expect(sent).toEqual({ attributes: { vote: "02ab", delegate: { rank: 1 } } });
    });

    it("sends BigNumbers as bigints, which a structured clone keeps", async () => {
        const sent = toTransferable({ balance: Utils.BigNumber.make(42) });

        expect(sent).toEqual({ balance: 42n });
        expect(await acrossThreads(sent)).toEqual({ balance: 42n });
    });

    it("posts the node's own wallet objects, which arrive in the wallet thread with every BigNumber a bigint", async () => {
        const attributes = {
            delegate: { username: "genesis_1", voteBalance: Utils.BigNumber.make("12345678901234567890"), rank: 1 },
            htlc: { locks: { abc: { amount: Utils.BigNumber.make(7), expiration: { type: 1, value: 9 } } } },
        };
        const nodeWallet = {
            getAddress: () => "AYzyUFvKgHtNnJHfJLVBJgxxBwC8mjyn4q",
            getPublicKey: () => "02ab",
            getBalance: () => Utils.BigNumber.make(99),
            getNonce: () => Utils.BigNumber.make(2),
            getAttributes: () => attributes,
        } as unknown as Contracts.State.Wallet;

        const received = bigNumbersAsBigInts(await acrossThreads(transferWallet(nodeWallet)));

        expect(received).toEqual({
            address: "AYzyUFvKgHtNnJHfJLVBJgxxBwC8mjyn4q",
            publicKey: "02ab",
            balance: 99n,
            nonce: 2n,
            attributes: {
                delegate: { username: "genesis_1", voteBalance: 12345678901234567890n, rank: 1 },
                htlc: { locks: { abc: { amount: 7n, expiration: { type: 1, value: 9 } } } },
            },
        });
        // The clone is the copy: the node's attribute objects are untouched.
        expect(attributes.delegate.voteBalance).toBeInstanceOf(Utils.BigNumber);
    });
});
