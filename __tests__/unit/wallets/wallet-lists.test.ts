import { WalletCriteria, WalletResource } from "@arkecosystem/core-api/dist/resources-new";
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

    describe("when the refresh's patch of a list takes many slices", () => {
        // 4,000 changes in 100,000 wallets, in 40 versions of 100: patched, not sorted again, in
        // tens of milliseconds; a list's version says how far its patch has come.
        const blockOfManyChanges = (lists: WalletLists): void => {
            for (let batch = 0; batch < 40; batch++) {
                lists.put(
                    Array.from({ length: 100 }, (_, step) => {
                        const changed = batch * 100 + step;
                        return walletOf(changed * 23 + 5, 5_000_000n + BigInt(changed));
                    }),
                );
            }
        };
        const listsOfTwoOrders = async (): Promise<WalletLists> => {
            const lists = new WalletLists(noCriteria);
            lists.put(Array.from({ length: 100_000 }, (_, index) => walletOf(index, BigInt(index))));
            // The refresh goes through the lists least recently read first: ORDERS[0] first.
            await lists.page({ offset: 0, limit: 10 }, ORDERS[0]);
            await lists.page({ offset: 0, limit: 10 }, ORDERS[3]);
            return lists;
        };
        /**
         * Asks for a page once the refresh has begun (and starts `alongside` just before), and
         * notes the first list's version at every turn until answered.
         */
        const askDuringRefresh = (lists: WalletLists, sorting: Contracts.Search.Sorting, alongside = (): void => {}) =>
            new Promise<{
                balances: bigint[];
                firstListVersions: Set<number>;
                whenAnswered: ReturnType<WalletLists["state"]>;
            }>((resolve) =>
                setImmediate(() => {
                    const firstListVersions = new Set<number>();
                    let answered = false;
                    const note = (): void => {
                        if (!answered) {
                            firstListVersions.add(lists.state().lists[0]);
                            setImmediate(note);
                        }
                    };
                    note();
                    alongside();
                    void lists.page({ offset: 0, limit: 2 }, sorting).then((answer) => {
                        answered = true;
                        resolve({
                            balances: answer.results.map((wallet) => wallet.balance as unknown as bigint),
                            firstListVersions,
                            whenAnswered: lists.state(),
                        });
                    });
                }),
            );

        it("stops patching the list it is on while a request patches another", async () => {
            const lists = await listsOfTwoOrders();
            blockOfManyChanges(lists);

            const refreshed = lists.refresh();
            const { balances, firstListVersions, whenAnswered } = await askDuringRefresh(lists, ORDERS[3]);
            await refreshed;

            expect(balances).toEqual([0n, 1n]);
            // The refresh's list had begun and stood still while the request's was patched.
            expect(firstListVersions.size).toBe(1);
            expect([...firstListVersions][0]).toBeLessThan(whenAnswered.version);
            expect(whenAnswered.lists[1]).toBe(whenAnswered.version);
            expect(lists.state().lists).toEqual([lists.state().version, lists.state().version]);
        });

        it("answers a request for the very list it is patching once that patch ends", async () => {
            const lists = await listsOfTwoOrders();
            blockOfManyChanges(lists);

            const refreshed = lists.refresh();
            const { balances, whenAnswered } = await askDuringRefresh(lists, ORDERS[0]);
            await refreshed;

            expect(balances).toEqual([5_003_999n, 5_003_998n]);
            // A list read moves last: the one asked is current, the other not yet.
            expect(whenAnswered.lists).toEqual([whenAnswered.version - 40, whenAnswered.version]);
            expect(lists.state().lists).toEqual([lists.state().version, lists.state().version]);
        });

        it("goes on with the list a request waits for while other requests keep coming", async () => {
            const lists = await listsOfTwoOrders();
            blockOfManyChanges(lists);
            let waiting = true;
            let others = 0;
            // Requests for ever new filters, two at a time: each sorts its matches in slices, so
            // that another request is under way at every turn while the first one waits.
            const keepAsking = async (lane: number): Promise<void> => {
                for (let from = 90_000 + lane; waiting && others < 60; from += 2) {
                    const criteria = { balance: { from } } as unknown as WalletCriteria;
                    await lists.page({ offset: 0, limit: 1 }, ORDERS[0], criteria);
                    others++;
                }
            };
            const lanes: Promise<void>[] = [];

            const refreshed = lists.refresh();
            const { balances } = await askDuringRefresh(lists, ORDERS[0], () =>
                lanes.push(keepAsking(0), keepAsking(1)),
            );
            const othersWhenAnswered = others;
            waiting = false;
            await Promise.all(lanes);
            await refreshed;

            expect(balances).toEqual([5_003_999n, 5_003_998n]);
            // Answered once the refresh's patch of its list ended, not once the others stopped.
            expect(othersWhenAnswered).toBeLessThan(20);
        });
    });
});

describe("a list patched", () => {
    it("holds each wallet once, where it now sorts, whether a block moved it a place, far, twice, or away", async () => {
        const lists = new WalletLists(noCriteria);
        const wallets = Array.from({ length: 5_000 }, (_, index) => walletOf(index, BigInt(index * 10)));
        lists.put(wallets);
        await lists.page({ offset: 0, limit: 1 }, ORDERS[0]);
        await lists.page({ offset: 0, limit: 1 }, ORDERS[1]);

        lists.put([
            walletOf(100, 1_005n), // past its neighbour
            walletOf(200, 2_000n), // unchanged
            walletOf(300, 49_999n), // to the other end
            walletOf(400, 4_001n), // twice in one batch: the second stands
            walletOf(400, 7n),
            walletOf(5_000, 3n), // new
        ]);
        lists.remove([wallets[4_999].address]);
        lists.put([walletOf(100, 0n)]); // again, in the next version

        const now = new Map(wallets.map((wallet) => [wallet.address, wallet]));
        for (const wallet of [
            walletOf(100, 1_005n),
            walletOf(300, 49_999n),
            walletOf(400, 7n),
            walletOf(5_000, 3n),
            walletOf(100, 0n),
        ]) {
            now.set(wallet.address, wallet);
        }
        now.delete(wallets[4_999].address);
        const expected = [...now.values()];
        const byBalance = await lists.page({ offset: 0, limit: 10_000 }, ORDERS[0]);
        expect(byBalance.totalCount).toBe(expected.length);
        expect(byBalance.results.map((wallet) => `${wallet.address} ${wallet.balance}`)).toEqual(
            [...expected]
                .sort((left, right) => Number(BigInt(right.balance.toString()) - BigInt(left.balance.toString())))
                .map((wallet) => `${wallet.address} ${wallet.balance}`),
        );
        const byNonce = await lists.page({ offset: 0, limit: 10_000 }, ORDERS[1]);
        expect(new Set(byNonce.results.map((wallet) => wallet.address)).size).toBe(expected.length);
    });
});

describe("new lists asked at once", () => {
    const byBalanceThenAddress = (wallets: WalletResource[], direction: 1 | -1): string[] =>
        [...wallets]
            .sort(
                (left, right) => direction * Number(BigInt(left.balance.toString()) - BigInt(right.balance.toString())),
            )
            .map((wallet) => wallet.address);

    it("are sorted one after the other, the first asked answered first, each with the wallets of its moment", async () => {
        const lists = new WalletLists(noCriteria);
        const wallets = Array.from({ length: 30_000 }, (_, index) => walletOf(index, BigInt((index * 7_919) % 30_011)));
        lists.put(wallets);
        const answered: number[] = [];
        let settled = false;
        const asked = [ORDERS[3], ORDERS[0], ORDERS[2]].map((sorting, index) =>
            lists.page({ offset: 0, limit: 30_000 }, sorting).then((page) => {
                answered.push(index);
                return page;
            }),
        );
        const sortsAtOnce: number[] = [];
        const watch = (): void => {
            sortsAtOnce.push(lists.state().sortsUnderWay);
            if (!settled) {
                setImmediate(watch);
            }
        };
        watch();
        // Wallets change while the first is sorted: every answer holds them.
        await new Promise((resolve) => setImmediate(resolve));
        const changed = [walletOf(5, 1_000_000n), walletOf(6, 1_000_001n)];
        lists.put(changed);
        const [ascending, descending, byAddress] = await Promise.all(asked);
        settled = true;

        expect(answered).toEqual([0, 1, 2]);
        expect(Math.max(...sortsAtOnce)).toBe(1);
        expect(sortsAtOnce.filter((sorts) => sorts === 1).length).toBeGreaterThan(10);
        const now = wallets.map((wallet) => changed.find((change) => change.address === wallet.address) ?? wallet);
        expect(ascending.results.map((wallet) => wallet.address)).toEqual(byBalanceThenAddress(now, 1));
        expect(descending.results.map((wallet) => wallet.address)).toEqual(byBalanceThenAddress(now, -1));
        expect(byAddress.results.map((wallet) => wallet.address)).toEqual(now.map((wallet) => wallet.address));
    });

    it("go on after one that fails", async () => {
        const lists = new WalletLists(noCriteria);
        lists.put(
            Array.from({ length: 5_000 }, (_, index) => ({
                ...walletOf(index, BigInt(index)),
                attributes: { mixed: index % 2 === 0 ? "even" : index },
            })) as unknown as WalletResource[],
        );
        const failing = lists.page({ offset: 0, limit: 1 }, [{ property: "attributes.mixed", direction: "asc" }]);
        const after = lists.page({ offset: 0, limit: 2 }, ORDERS[0]);

        await expect(failing).rejects.toThrow("Mismatched types");
        expect((await after).results.map((wallet) => wallet.balance)).toEqual([4_999n, 4_998n]);
    });
});
