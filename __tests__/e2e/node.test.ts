import { Identities } from "@arkecosystem/crypto";
import { Client } from "pg";
import { Webhook as StandardWebhook } from "standardwebhooks";

import { version } from "../../package.json";
import { SCHEMA } from "../../src/cluster/postgres-schema";
import { EVENT_NAMES, EXCLUDED_EVENTS } from "../../src/events/catalogue";
import { eventually, requestJson } from "../support/http";
import { Receiver } from "../support/receiver";
import { Chain } from "../../local-node/chain";
import { RunningNode, startNodeProcess } from "./support/local-node-process";

jest.setTimeout(600_000);

interface ServiceInfo {
    data: { name: string; version: string; listener: { byEvent: Record<string, number> } };
}

interface Delivered {
    id: string;
    event: string;
    data: Record<string, unknown>;
}

const SATOSHI = 100_000_000;

const LISTINGS_ASKED_EARLY = [
    "/wallets?orderBy=balance:asc&limit=10",
    "/wallets?orderBy=nonce:desc,address:asc&limit=10",
    "/wallets?orderBy=attributes.delegate.voteBalance:desc&limit=5",
    "/wallets?balance.from=1000000000000&limit=10",
    "/wallets?nonce.from=1&nonce.to=3",
];

describe("the plugin inside a real ARK Core 3.9.1 node", () => {
    let node: RunningNode;
    let chain: Chain;
    const receiver = new Receiver();
    const tokens = new Map<string, string>();
    let freshAddress: string;
    let lockRecipient: string;
    let transferToFreshId: string;
    let voteId: string;
    let firstHookedHeight: number;
    let transactionHookId: string;

    const createWebhook = async (event: string, conditions: unknown[]): Promise<string> => {
        const { status, body } = await requestJson<{ data: { id: string; token: string } }>(
            `${node.pluginUrl}/webhooks`,
            { method: "POST", body: { event, target: receiver.url, conditions } },
        );
        expect(status).toBe(201);
        tokens.set(body.data.id, body.data.token);
        return body.data.id;
    };

    /** Every delivery received, verified with the Standard Webhooks library and deduplicated on webhook-id. */
    const delivered = (event: string): Delivered[] => {
        const byId = new Map<string, Delivered>();
        for (const request of receiver.requests) {
            const parsed = JSON.parse(request.body) as { event: string; data: Record<string, unknown> };
            if (parsed.event !== event) {
                continue;
            }
            const verified = [...tokens.values()].some((token) => {
                try {
                    new StandardWebhook(Buffer.from(token, "hex"), { format: "raw" }).verify(
                        request.body,
                        request.headers as Record<string, string>,
                    );
                    return true;
                } catch {
                    return false;
                }
            });
            expect(verified).toBe(true);
            byId.set(String(request.headers["webhook-id"]), { id: String(request.headers["webhook-id"]), ...parsed });
        }
        return [...byId.values()];
    };

    beforeAll(async () => {
        await receiver.start();
        // This node keeps its register in the shared-register driver, on its own PostgreSQL: the
        // first-hour walk covers the default SQLite register.
        node = await startNodeProcess({ storage: { driver: "postgres" } });
        chain = await Chain.connect(node.apiUrl);
        // Wallet listings asked before the transactions: the table below then reads lists the
        // catalogue patched as the wallets changed, not lists sorted afresh.
        for (const path of LISTINGS_ASKED_EARLY) {
            expect((await requestJson(`${node.pluginUrl}${path}`)).status).toBe(200);
        }
        // Addresses derived from passphrases nobody else uses: they receive and never send.
        freshAddress = Identities.Address.fromPassphrase(`fresh recipient ${node.dataDir}`);
        lockRecipient = Identities.Address.fromPassphrase(`lock recipient ${node.dataDir}`);

        transactionHookId = await createWebhook("transaction.applied", [
            { key: "recipientId", condition: "eq", value: freshAddress },
        ]);
        await createWebhook("block.applied", []);
        await createWebhook("wallet.vote", [
            { key: "transaction.senderPublicKey", condition: "eq", value: chain.delegate(2).publicKey },
        ]);
        firstHookedHeight = (await chain.height()) + 1;

        const funder = chain.delegate(0);
        const locker = chain.delegate(1);
        const voter = chain.delegate(2);
        const transferToFresh = chain.transfer(
            funder.passphrase,
            (await chain.nonce(funder.address)) + 1n,
            freshAddress,
            String(123 * SATOSHI),
        );
        transferToFreshId = transferToFresh.id as string;
        const otherTransfer = chain.transfer(
            funder.passphrase,
            (await chain.nonce(funder.address)) + 2n,
            lockRecipient,
            String(5 * SATOSHI),
        );
        const lock = chain.htlcLock(
            locker.passphrase,
            (await chain.nonce(locker.address)) + 1n,
            lockRecipient,
            String(7 * SATOSHI),
            (await chain.height()) + 500,
        );
        const unvote = chain.vote(voter.passphrase, (await chain.nonce(voter.address)) + 1n, `-${voter.publicKey}`);
        await chain.sendAndForge([transferToFresh, otherTransfer, lock, unvote]);
        // The pool takes one vote per sender at a time: the new vote goes in the next block.
        const vote = chain.vote(
            voter.passphrase,
            (await chain.nonce(voter.address)) + 1n,
            `+${chain.delegate(3).publicKey}`,
        );
        voteId = vote.id as string;
        await chain.sendAndForge([vote]);
    });

    afterAll(async () => {
        await node?.stop();
        await receiver.stop();
    });

    it("answers on its own port with its name and version, under /api and /api/v2", async () => {
        for (const url of [node.pluginUrl, node.pluginUrl.replace(/\/api$/, "/api/v2")]) {
            const response = await requestJson<ServiceInfo>(url);

            expect(response.status).toBe(200);
            expect(response.body.data.name).toBe("core-wallet-webhooks");
            expect(response.body.data.version).toBe(version);
        }
    });

    it("keeps its register in the node's PostgreSQL with storage.driver postgres", async () => {
        const database = new Client({ connectionString: node.postgresUrl });
        await database.connect();
        try {
            const { rows } = await database.query<{ id: string; event: string }>(
                `SELECT id, event FROM ${SCHEMA}.webhooks ORDER BY seq`,
            );
            expect(rows.map((row) => row.id)).toEqual([...tokens.keys()]);
            expect(rows.map((row) => row.event)).toEqual(["transaction.applied", "block.applied", "wallet.vote"]);
        } finally {
            await database.end();
        }
    });

    it("receives block.applied events from the node's forger", async () => {
        const { body } = await requestJson<ServiceInfo>(node.pluginUrl);

        expect(body.data.listener.byEvent["block.applied"]).toBeGreaterThanOrEqual(2);
        // Every event this node dispatched is subscribable, or listed as excluded with its reason.
        const excluded = new Set(EXCLUDED_EVENTS.map((entry) => entry.name));
        const seen = Object.keys(body.data.listener.byEvent);
        expect(seen.filter((name) => !EVENT_NAMES.has(name) && !excluded.has(name))).toEqual([]);
    });

    it("delivers to a transaction.applied webhook exactly the transfer sent to its address", async () => {
        const deliveries = await eventually(async () => {
            const found = delivered("transaction.applied");
            return found.length > 0 ? found : undefined;
        });
        // Two blocks later, every transaction before them was matched and its deliveries forwarded
        // (in the journal's order): a wrongly matched one would be listed, and once none is pending,
        // it would have arrived.
        const later = (await chain.height()) + 2;
        await eventually(
            async () =>
                delivered("block.applied").some((block) => Number(block.data.height) >= later) ? true : undefined,
            { timeoutMs: 60_000 },
        );
        const listed = await eventually(async () => {
            const shown = await requestJson<{ data: Array<{ status: string }> }>(
                `${node.pluginUrl}/webhooks/${transactionHookId}/deliveries`,
            );
            return shown.body.data.every((delivery) => delivery.status !== "pending") ? shown.body.data : undefined;
        });
        expect(listed).toHaveLength(1);

        expect(delivered("transaction.applied").map((delivery) => delivery.data.id)).toEqual([transferToFreshId]);
        expect(deliveries[0].data.recipientId).toBe(freshAddress);
        expect(deliveries[0].data.amount).toBe(String(123 * SATOSHI));
    });

    it("delivers each forged block to a block.applied webhook, once", async () => {
        const lastHeight = await chain.height();
        const heights = await eventually(async () => {
            const found = delivered("block.applied").map((delivery) => Number(delivery.data.height));
            return found.includes(lastHeight) ? found : undefined;
        });
        const expected = Array.from(
            { length: lastHeight - firstHookedHeight + 1 },
            (_, index) => firstHookedHeight + index,
        );

        expect(heights.filter((height) => height <= lastHeight).sort((a, b) => a - b)).toEqual(expected);
    });

    it("delivers the vote to a wallet.vote webhook", async () => {
        const votes = await eventually(async () => {
            const found = delivered("wallet.vote");
            return found.length > 0 ? found : undefined;
        });

        expect(votes).toHaveLength(1);
        expect(votes[0].data.delegate).toBe(`+${chain.delegate(3).publicKey}`);
        expect((votes[0].data.transaction as { id: string }).id).toBe(voteId);
    });

    it("keeps its deliveries in the node's PostgreSQL, the outbox several relays share", async () => {
        const blockWebhookId = [...tokens.keys()][1];
        const database = new Client({ connectionString: node.postgresUrl });
        await database.connect();
        try {
            const deliveredHeights = async (): Promise<number[]> =>
                (
                    await database.query<{ height: string }>(
                        `SELECT (body::json -> 'data' ->> 'height') AS height FROM ${SCHEMA}.deliveries
                         WHERE webhook_id = $1 AND status = 'delivered'`,
                        [blockWebhookId],
                    )
                ).rows.map((row) => Number(row.height));
            const received = delivered("block.applied").map((delivery) => Number(delivery.data.height));
            // An outcome is written a moment after the receiver reads the request.
            const heights = await eventually(async () => {
                const found = await deliveredHeights();
                return received.every((height) => found.includes(height)) ? found : undefined;
            });
            expect(new Set(heights).size).toBe(heights.length);
        } finally {
            await database.end();
        }
    });

    describe("wallet routes: the same status and body as core-api on the same node", () => {
        const paths = (): string[] => {
            const funder = chain.delegate(0);
            const locker = chain.delegate(1);
            const voter = chain.delegate(2);
            const wallets = [funder.address, voter.publicKey, freshAddress, lockRecipient];
            return [
                "/wallets",
                "/wallets?limit=5",
                "/wallets?page=2&limit=10",
                "/wallets?offset=7&limit=3",
                "/wallets?orderBy=balance:asc&limit=10",
                "/wallets?orderBy=balance:desc&page=3&limit=5",
                "/wallets?orderBy=nonce:desc,address:asc&limit=10",
                "/wallets?orderBy=attributes.delegate.voteBalance:desc&limit=5",
                `/wallets?address=${freshAddress}`,
                `/wallets?publicKey=${voter.publicKey}`,
                `/wallets?balance=${123 * SATOSHI}`,
                "/wallets?balance.from=1000000000000&limit=10",
                "/wallets?balance.to=20000000000&orderBy=balance:asc",
                "/wallets?balance.from=100000000&balance.to=20000000000",
                "/wallets?nonce=0&limit=10",
                "/wallets?nonce.from=1&nonce.to=3",
                "/wallets?nonce.from=2",
                "/wallets?nonce.to=0&orderBy=address:asc",
                `/wallets?attributes.vote=${chain.delegate(3).publicKey}`,
                "/wallets?attributes.delegate.username=genesis_1",
                "/wallets?limit=1000",
                "/wallets?page=0",
                "/wallets?orderBy=balance:sideways",
                "/wallets?balance.from=abc",
                "/wallets?balance=abc",
                "/wallets?nonce=-1",
                "/wallets?nonce.from=-1",
                ...wallets.map((id) => `/wallets/${id}`),
                "/wallets/genesis_2",
                "/wallets/AUnknownAddressUnknownAddressUnkno",
                "/wallets/not%20a%20wallet",
                ...[funder.address, freshAddress].flatMap((id) => [
                    `/wallets/${id}/transactions`,
                    `/wallets/${id}/transactions?transform=false`,
                    `/wallets/${id}/transactions/sent`,
                    `/wallets/${id}/transactions/received`,
                ]),
                `/wallets/${funder.address}/transactions?limit=2&page=2`,
                `/wallets/${funder.address}/transactions?orderBy=amount:desc`,
                `/wallets/${funder.address}/transactions/sent?orderBy=nonce:asc&limit=2`,
                `/wallets/${lockRecipient}/transactions/received?transform=false&orderBy=timestamp:asc`,
                `/wallets/${voter.address}/votes`,
                `/wallets/${voter.publicKey}/votes?transform=false`,
                `/wallets/${voter.address}/votes?orderBy=nonce:asc&limit=1`,
                `/wallets/${freshAddress}/votes`,
                `/wallets/${locker.address}/locks`,
                `/wallets/${locker.publicKey}/locks?orderBy=amount:desc`,
                `/wallets/${funder.address}/locks`,
                "/wallets/AUnknownAddressUnknownAddressUnkno/transactions",
                "/wallets/AUnknownAddressUnknownAddressUnkno/votes",
                "/wallets/AUnknownAddressUnknownAddressUnkno/locks",
                `/wallets/${funder.address}/transactions?limit=0`,
                `/wallets/${funder.address}/transactions?transform=maybe`,
                `/wallets/${locker.address}/locks?page=0`,
            ];
        };

        it("answers a table of at least 40 requests exactly as core-api does", async () => {
            const table = paths();
            expect(table.length).toBeGreaterThanOrEqual(40);
            expect(table).toEqual(expect.arrayContaining(LISTINGS_ASKED_EARLY));
            const differences: string[] = [];
            const statuses = new Set<number>();
            // Under /api/v2 too: links are relative to the base path, so the bodies are the same.
            const requests = [node.pluginUrl, `${node.pluginUrl}/v2`].flatMap((base) =>
                table.map((path) => ({ base, path })),
            );
            for (const { base, path } of requests) {
                const [ours, theirs] = await Promise.all([
                    requestJson(`${base}${path}`),
                    requestJson(`${node.apiUrl}${path}`),
                ]);
                statuses.add(theirs.status);
                if (ours.status !== theirs.status || JSON.stringify(ours.body) !== JSON.stringify(theirs.body)) {
                    differences.push(
                        `${base}${path}: ours ${ours.status} ${ours.text.slice(0, 300)}\n  core-api ${theirs.status} ${theirs.text.slice(0, 300)}`,
                    );
                }
            }

            expect(differences).toEqual([]);
            expect([...statuses].sort()).toEqual([200, 404, 422]);
        });

        it("lists wallets of equal keys in core-api's order, in every order, as they are indexed again and after a revert", async () => {
            const funded = String(10 * SATOSHI);
            const spent = String(89 * (SATOSHI / 10)); // 10 ARK less 1 ARK sent and a 0.1 ARK fee
            const orders = ["", "balance:asc", "balance:desc", "balance", "nonce:asc", "nonce:desc", "publicKey:asc"];
            const table = [
                ...orders.map((order) => `/wallets?limit=100${order ? `&orderBy=${order}` : ""}`),
                "/wallets?nonce.from=0&limit=100",
                `/wallets?balance=${funded}`,
                `/wallets?balance=${spent}&orderBy=nonce:desc`,
                "/wallets?orderBy=attributes.delegate.voteBalance:desc&limit=100",
            ];
            /** Each path asked of both between two blocks (a block between them asks again): those that differ. */
            const differing = async (step: string): Promise<string[]> => {
                const found: string[] = [];
                for (const base of [node.pluginUrl, `${node.pluginUrl}/v2`]) {
                    for (const path of table) {
                        for (;;) {
                            const height = await chain.height();
                            const ours = await requestJson(`${base}${path}`);
                            const theirs = await requestJson(`${node.apiUrl}${path}`);
                            if ((await chain.height()) !== height) {
                                continue;
                            }
                            if (ours.text !== theirs.text) {
                                found.push(`${step} ${base}${path}:\n  ours ${ours.text}\n  core-api ${theirs.text}`);
                            }
                            break;
                        }
                    }
                }
                return found;
            };
            const funder = chain.delegate(0);
            const nonce = await chain.nonce(funder.address);
            const twins = Array.from({ length: 4 }, (_, index) => `tied wallet ${index} ${node.dataDir}`);
            await chain.sendAndForge(
                twins.map((passphrase, index) =>
                    chain.transfer(
                        funder.passphrase,
                        nonce + BigInt(index + 1),
                        Identities.Address.fromPassphrase(passphrase),
                        funded,
                    ),
                ),
            );
            expect(await differing("after the tied transfers")).toEqual([]);

            // Each sends 1 ARK for a 0.1 ARK fee: still tied. An HTLC lock indexes its sender again,
            // which moves it to the end of the repository's index; a transfer does not.
            const sent = [
                chain.htlcLock(twins[2], 1n, lockRecipient, String(SATOSHI), (await chain.height()) + 500),
                chain.htlcLock(twins[0], 1n, lockRecipient, String(SATOSHI), (await chain.height()) + 500),
                chain.transfer(twins[1], 1n, lockRecipient, String(SATOSHI)),
                chain.transfer(twins[3], 1n, lockRecipient, String(SATOSHI)),
            ];
            await chain.sendAndForge(sent);
            const sentHeight = await chain.forged(sent[0].id as string);
            expect(await differing("after two of them were indexed again")).toEqual([]);

            // Back to before those: balances and nonces as funded, the index's order as it became.
            const heightAfter = await node.removeBlocks((await chain.height()) - sentHeight + 1);
            expect(heightAfter).toBeLessThan(sentHeight);
            expect(await differing("after the revert")).toEqual([]);
        });

        it("finds the fresh recipient, which never sent, and its transfer", async () => {
            const wallet = await requestJson<{ data: { address: string; publicKey?: string; balance: string } }>(
                `${node.pluginUrl}/wallets/${freshAddress}`,
            );
            const received = await requestJson<{ data: Array<{ id: string }> }>(
                `${node.pluginUrl}/wallets/${freshAddress}/transactions/received`,
            );

            expect(wallet.body.data).toMatchObject({ address: freshAddress, balance: String(123 * SATOSHI) });
            expect(wallet.body.data.publicKey).toBeUndefined();
            expect(received.body.data.map((transaction) => transaction.id)).toEqual([transferToFreshId]);
        });

        it("lists the HTLC lock among the locker's locks", async () => {
            const locks = await requestJson<{ data: Array<{ recipientId: string; amount: string }> }>(
                `${node.pluginUrl}/wallets/${chain.delegate(1).address}/locks`,
            );

            expect(locks.body.data).toEqual([
                expect.objectContaining({ recipientId: lockRecipient, amount: String(7 * SATOSHI) }),
            ]);
        });
    });
});
