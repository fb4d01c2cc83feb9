import { Identities, Interfaces, Managers, Transactions } from "@arkecosystem/crypto";
import passphrases from "@arkecosystem/core-test-framework/dist/internal/passphrases.json";

import { eventually, requestJson } from "../../support/http";

/** Builds and sends signed transactions to a node through its core-api, with the node's own crypto config. */
export class Chain {
    private constructor(private readonly apiUrl: string) {}

    public static async connect(apiUrl: string): Promise<Chain> {
        const { body } = await requestJson<{ data: Interfaces.NetworkConfig }>(`${apiUrl}/node/configuration/crypto`);
        Managers.configManager.setConfig(body.data);
        const chain = new Chain(apiUrl);
        Managers.configManager.setHeight(await chain.height());
        return chain;
    }

    public delegate(index: number): { passphrase: string; publicKey: string; address: string } {
        const passphrase = passphrases[index];
        const publicKey = Identities.PublicKey.fromPassphrase(passphrase);
        return { passphrase, publicKey, address: Identities.Address.fromPublicKey(publicKey) };
    }

    public async height(): Promise<number> {
        const { body } = await requestJson<{ data: { block: { height: number } } }>(`${this.apiUrl}/blockchain`);
        return body.data.block.height;
    }

    public async nonce(address: string): Promise<bigint> {
        const { body } = await requestJson<{ data: { nonce: string } }>(`${this.apiUrl}/wallets/${address}`);
        return BigInt(body.data.nonce);
    }

    public transfer(
        passphrase: string,
        nonce: bigint,
        recipientId: string,
        amount: string,
    ): Interfaces.ITransactionData {
        return Transactions.BuilderFactory.transfer()
            .recipientId(recipientId)
            .amount(amount)
            .nonce(nonce.toString())
            .sign(passphrase)
            .getStruct();
    }

    public vote(passphrase: string, nonce: bigint, vote: string): Interfaces.ITransactionData {
        return Transactions.BuilderFactory.vote()
            .votesAsset([vote])
            .nonce(nonce.toString())
            .sign(passphrase)
            .getStruct();
    }

    public htlcLock(
        passphrase: string,
        nonce: bigint,
        recipientId: string,
        amount: string,
        expiresAtHeight: number,
    ): Interfaces.ITransactionData {
        return Transactions.BuilderFactory.htlcLock()
            .htlcLockAsset({
                secretHash: "439c5bbb179d436b1ebdb0363564a6f7e9a297dcb579dcbf915b4675fe73cec4",
                expiration: { type: 2, value: expiresAtHeight },
            })
            .recipientId(recipientId)
            .amount(amount)
            .nonce(nonce.toString())
            .sign(passphrase)
            .getStruct();
    }

    /** Posts transactions to the pool and waits until every one of them is in a block. */
    public async sendAndForge(transactions: Interfaces.ITransactionData[]): Promise<void> {
        const { status, body } = await requestJson<{ data: { accept: string[]; invalid: string[] }; errors?: unknown }>(
            `${this.apiUrl}/transactions`,
            { method: "POST", body: { transactions } },
        );
        if (status !== 200 || body.data.accept.length !== transactions.length) {
            throw new Error(`the pool refused transactions: ${status} ${JSON.stringify(body)}`);
        }
        for (const transaction of transactions) {
            await eventually(
                async () => {
                    const found = await requestJson(`${this.apiUrl}/transactions/${transaction.id}`);
                    return found.status === 200 ? true : undefined;
                },
                { timeoutMs: 60_000, intervalMs: 500 },
            );
        }
        Managers.configManager.setHeight(await this.height());
    }
}
