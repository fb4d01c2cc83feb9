import { Identities } from "@arkecosystem/crypto";

import { Chain, Delegate } from "./chain";

/**
 * `npm run send -- transfer [amount] [recipient]`, `vote <delegate>`, `unvote`: signs with a
 * genesis delegate of the local network (genesis_1 unless LOCAL_NODE_SENDER picks another,
 * 1–51), posts to the local node's core-api and waits until the transaction is in a block.
 */
const USAGE = `usage: npm run send -- transfer [amount in ARK, default 1] [recipient address]
       npm run send -- vote <delegate: username, address or public key>
       npm run send -- unvote`;

/** A recipient nobody sends from: its first transfer creates the wallet. */
const DEFAULT_RECIPIENT_PASSPHRASE = "core-wallet-webhooks local recipient";

const SATOSHI_DIGITS = 8;

class UsageError extends Error {}

const toSatoshi = (amount: string): string => {
    const match = /^(\d{1,12})(?:\.(\d{1,8}))?$/.exec(amount);
    if (!match) {
        throw new UsageError(`amount "${amount}" is not a number of ARK with at most 8 decimals`);
    }
    const satoshi = BigInt(match[1]) * 10n ** BigInt(SATOSHI_DIGITS) + BigInt((match[2] ?? "").padEnd(8, "0"));
    if (satoshi === 0n) {
        throw new UsageError("amount must be more than 0");
    }
    return satoshi.toString();
};

const senderIndex = (): number => {
    const chosen = Number(process.env.LOCAL_NODE_SENDER ?? 1);
    if (!Number.isInteger(chosen) || chosen < 1 || chosen > 51) {
        throw new UsageError(`LOCAL_NODE_SENDER=${process.env.LOCAL_NODE_SENDER}: choose a delegate from 1 to 51`);
    }
    return chosen - 1;
};

const submit = async (chain: Chain, what: string, transaction: ReturnType<Chain["transfer"]>): Promise<void> => {
    await chain.send([transaction]);
    console.log(`${what}: transaction ${transaction.id} sent, waiting for a block…`);
    const height = await chain.forged(transaction.id as string);
    console.log(`${what}: in block ${height}`);
};

const unvote = async (chain: Chain, sender: Delegate, votedFor: string): Promise<void> => {
    const transaction = chain.vote(sender.passphrase, (await chain.nonce(sender.address)) + 1n, `-${votedFor}`);
    await submit(chain, `unvote ${votedFor}`, transaction);
};

const run = async (args: string[]): Promise<void> => {
    const [command, ...rest] = args;
    const apiUrl = `http://127.0.0.1:${process.env.LOCAL_NODE_API_PORT ?? 4003}/api`;
    if (!["transfer", "vote", "unvote"].includes(command ?? "")) {
        throw new UsageError(command ? `unknown command "${command}"` : "which transaction?");
    }
    const chain = await Chain.connect(apiUrl).catch((error: unknown) => {
        throw new Error(`no local node answers at ${apiUrl} (start one with npm start): ${String(error)}`);
    });
    const sender = chain.delegate(senderIndex());
    if (command === "transfer") {
        const amount = toSatoshi(rest[0] ?? "1");
        const recipient = rest[1] ?? Identities.Address.fromPassphrase(DEFAULT_RECIPIENT_PASSPHRASE);
        if (!Identities.Address.validate(recipient)) {
            throw new UsageError(`recipient "${recipient}" is not an address of this network`);
        }
        const transaction = chain.transfer(
            sender.passphrase,
            (await chain.nonce(sender.address)) + 1n,
            recipient,
            amount,
        );
        await submit(chain, `transfer ${rest[0] ?? "1"} ARK to ${recipient}`, transaction);
        return;
    }
    const votedFor = await chain.votedFor(sender.address);
    if (command === "unvote") {
        if (!votedFor) {
            throw new UsageError(`${sender.address} votes for no delegate`);
        }
        await unvote(chain, sender, votedFor);
        return;
    }
    if (!rest[0]) {
        throw new UsageError("vote for which delegate?");
    }
    const delegate = await chain.findDelegate(rest[0]);
    if (!delegate) {
        throw new UsageError(`no delegate "${rest[0]}" on this network`);
    }
    if (votedFor === delegate.publicKey) {
        throw new UsageError(`${sender.address} votes for ${delegate.username} already`);
    }
    if (votedFor) {
        // One vote per wallet: the old one goes first, in its own block (the pool takes one per sender).
        await unvote(chain, sender, votedFor);
    }
    const transaction = chain.vote(
        sender.passphrase,
        (await chain.nonce(sender.address)) + 1n,
        `+${delegate.publicKey}`,
    );
    await submit(chain, `vote ${delegate.username}`, transaction);
};

run(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof UsageError ? `${error.message}\n${USAGE}` : String(error));
    process.exit(error instanceof UsageError ? 2 : 1);
});
