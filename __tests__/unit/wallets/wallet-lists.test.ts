import { WalletResource } from "@arkecosystem/core-api/dist/resources-new";
import { Contracts } from "@arkecosystem/core-kernel";

import { WalletLists } from "../../../src/wallets/wallet-lists";

// No listing here has criteria: the tester is never asked.
const noCriteria = { testStandardCriterias: (): boolean => true };

const walletOf = (index: number, balance: bigint): WalletResource =>
    ({
        address: `A${String(index).padStart(8, "0")}`,
        publicKey: undefined,
        balance,
        nonce: BigInt(index % 11),
        attributes: {},
    }) as unknown as WalletResource;

const ORDERS: Contracts.Search.Sorting[] = [
    [{ property: "balance", direction: "desc" }],
    [{ property: "nonce", direction: "asc" }],
    [{ property: "address", direction: "asc" }],
    [{ property: "balance", direction: "asc" }],
];

describe("the wallet lists after a block", () => {
    it("answer a request that comes while they are brought up to date before the lists it does not ask for", async () => {
        const lists = new WalletLists(noCriteria);
        lists.put(Array.from({ length: 20_000 }, (_, index) => walletOf(index, BigInt(index))));
        for (const sorting of ORDERS) {
            await lists.page({ offset: 0, limit: 10 }, sorting);
        }
        // A block: 30 wallets change, the richest among them (each list is patched in well under a slice).
        lists.put(Array.from({ length: 30 }, (_, step) => walletOf(step * 61 + 1, 1_000_000n + BigInt(step))));

        // In the wallet thread the block's refresh comes first, and the request in a message after it.
        const refreshed = lists.refresh();
        const { page, whenAnswered } = await new Promise<{
            page: Awaited<ReturnType<WalletLists["page"]>>;
            whenAnswered: ReturnType<WalletLists["state"]>;
        }>((resolve) =>
            setImmediate(() => {
                void lists
                    .page({ offset: 0, limit: 3 }, ORDERS[3])
                    .then((answer) => resolve({ page: answer, whenAnswered: lists.state() }));
            }),
        );
        await refreshed;

        expect(page.results.map((wallet) => wallet.balance)).toEqual([0n, 2n, 3n]);
        // Its own list, and at most the one the refresh was patching when the request came.
        const current = whenAnswered.lists.filter((version) => version === whenAnswered.version);
        expect(current.length).toBeLessThanOrEqual(2);
        expect(lists.state().lists.every((version) => version === lists.state().version)).toBe(true);
        const richest = await lists.page({ offset: 0, limit: 1 }, ORDERS[0]);
        expect(richest.results[0].balance).toBe(1_000_029n);
    });
});
