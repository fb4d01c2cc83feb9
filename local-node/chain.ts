import { Identities, Interfaces, Managers, Transactions } from "@arkecosystem/crypto";
import passphrases from "@arkecosystem/core-test-framework/dist/internal/passphrases.json";
import { request } from "http";

interface JsonAnswer<T> {
    status: number;
    body: T;
}

/**
 * One request on a connection of its own: core-api destroys every socket after its response, so a
 * kept-alive connection (fetch's) now and then fails with "other side closed".
 */
const requestJson = <T>(url: string, body?: unknown): Promise<JsonAnswer<T>> =>
    new Promise((resolve, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const outgoing = request(
            url,
            {
                method: payload === undefined ? "GET" : "POST",
                agent: false,
                headers:
                    payload === undefined
                        ? {}
                        : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
            },
            (response) => {
                const chunks: Buffer[] = [];
                response.on("data", (chunk: Buffer) => chunks.push(chunk));
                response.on("error", reject);
                response.on("end", () => {
                    try {
                        const text = Buffer.concat(chunks).toString("utf8");
                        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as T });
                    } catch (error) {
                        reject(error);
                    }
                });
            },
        );
        outgoing.on("error", reject);
        outgoing.end(payload);
    });

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

export interface Delegate {
    passphrase: string;
    publicKey: string;
    address: string;
}

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

    /** One of the local network's 51 genesis delegates, who hold its funds (index 0 is genesis_1). */
    public delegate(index: number): Delegate {
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

    /** The public key of the delegate a wallet votes for, if any. */
    public async votedFor(address: string): Promise<string | undefined> {
        const { body } = await requestJson<{ data: { attributes?: { vote?: string } } }>(
            `${this.apiUrl}/wallets/${address}`,
        );
        return body.data.attributes?.vote;
    }

    /** A delegate named by username, address or public key, as core-api finds it. */
    public async findDelegate(id: string): Promise<{ username: string; publicKey: string } | undefined> {
        const { status, body } = await requestJson<{ data: { username: string; publicKey: string } }>(
            `${this.apiUrl}/delegates/${encodeURIComponent(id)}`,
        );
        return status === 200 ? body.data : undefined;
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

    /** Posts transactions to the pool; the pool's refusal is thrown with its reasons. */
    public async send(transactions: Interfaces.ITransactionData[]): Promise<void> {
        const { status, body } = await requestJson<{ data?: { accept: string[] }; errors?: unknown }>(
            `${this.apiUrl}/transactions`,
            { transactions },
        );
        if (status !== 200 || body.data?.accept.length !== transactions.length) {
            throw new Error(`the pool refused the transaction: ${status} ${JSON.stringify(body.errors ?? body)}`);
        }
    }

    /** Waits until a transaction is in a block; returns the block's height. */
    public async forged(transactionId: string, timeoutMs = 60_000): Promise<number> {
        const deadline = Date.now() + timeoutMs;
        while (Date.now() < deadline) {
            const found = await requestJson<{ data: { blockId?: string } }>(
                `${this.apiUrl}/transactions/${transactionId}`,
            );
            if (found.status === 200 && found.body.data.blockId !== undefined) {
                const block = await requestJson<{ data: { height: number } }>(
                    `${this.apiUrl}/blocks/${found.body.data.blockId}`,
                );
                Managers.configManager.setHeight(block.body.data.height);
                return block.body.data.height;
            }
            await sleep(500);
        }
        throw new Error(`transaction ${transactionId} was not forged within ${timeoutMs / 1000} s`);
    }

    /** Posts transactions to the pool and waits until every one of them is in a block. */
    public async sendAndForge(transactions: Interfaces.ITransactionData[]): Promise<void> {
        await this.send(transactions);
        for (const transaction of transactions) {
            await this.forged(transaction.id as string);
        }
    }
}
