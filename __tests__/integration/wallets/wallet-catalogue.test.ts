import { Container, Contracts } from "@arkecosystem/core-kernel";
import { Utils } from "@arkecosystem/crypto";
import { Worker } from "worker_threads";

import { WalletCatalogue } from "../../../src/wallets/wallet-catalogue";
import { compareLikeCoreApi } from "../../../src/wallets/wallet-order";
import { turnCounter } from "../../support/event-loop";
import { eventually } from "../../support/http";
import { createWalletState, WalletState } from "../../support/wallet-state";

const SORTING: Contracts.Search.Sorting = [
    { property: "nonce", direction: "desc" },
    { property: "balance", direction: "desc" },
];

/** The order core-api gives: every wallet sorted afresh, ties kept in the repository's order. */
const expectedAddresses = (state: WalletState, limit: number): string[] => {
    const compare = compareLikeCoreApi<Contracts.State.Wallet>(
        SORTING.map(({ property, direction }) => ({
            property: property === "nonce" ? "nonce" : "balance",
            direction,
        })),
    );
    const byValue = (wallet: Contracts.State.Wallet) => ({ nonce: wallet.getNonce(), balance: wallet.getBalance() });
    return state.repository
        .allByAddress()
        .map((wallet, index) => ({ wallet, index, values: byValue(wallet) }))
        .sort((left, right) => compare(left.values as never, right.values as never) || left.index - right.index)
        .slice(0, limit)
        .map(({ wallet }) => wallet.getAddress());
};

describe("the wallet catalogue while wallets change during a sliced sort", () => {
    it("answers with the state at the time it answers, each wallet once", async () => {
        const state = createWalletState(20_000, 7);
        const wallets = state.repository.allByAddress();
        let changing = true;
        let round = 0;
        const change = (): void => {
            if (!changing) {
                return;
            }
            for (let index = 0; index < 20; index++) {
                const wallet = wallets[(round * 131 + index * 977) % wallets.length];
                wallet.setNonce(wallet.getNonce().plus(Utils.BigNumber.make(25)));
            }
            round++;
            setImmediate(change);
        };
        setImmediate(change);
        const page = await state.catalogue.page({ offset: 0, limit: 200 }, SORTING);
        changing = false;
        expect(round).toBeGreaterThan(3); // the sort yielded while wallets changed

        const again = await state.catalogue.page({ offset: 0, limit: 200 }, SORTING);
        const addresses = again.results.map((wallet) => wallet.address);
        expect(addresses).toEqual(expectedAddresses(state, 200));
        expect(again.totalCount).toBe(wallets.length);
        expect(new Set(addresses).size).toBe(addresses.length);
        expect(page.totalCount).toBe(wallets.length);
        await state.catalogue.dispose();
    }, 60_000);
});

describe("the wallet catalogue over a long run", () => {
    it("drops a list nobody reads instead of keeping every change for it, and sorts it again when asked", async () => {
        const state = createWalletState(2_000, 3);
        const wallets = state.repository.allByAddress();
        await state.catalogue.page({ offset: 0, limit: 10 }, SORTING);
        const other: Contracts.Search.Sorting = [{ property: "balance", direction: "asc" }];
        for (let version = 0; version < 200; version++) {
            const wallet = wallets[(version * 37) % wallets.length];
            wallet.setNonce(wallet.getNonce().plus(Utils.BigNumber.ONE));
            await state.catalogue.page({ offset: 0, limit: 10 }, other);
        }
        const kept = await state.catalogue.threadState();
        expect(kept?.changesKept).toBeLessThanOrEqual(65);
        expect(kept?.lists).toHaveLength(1); // the other list was dropped

        const again = await state.catalogue.page({ offset: 0, limit: 200 }, SORTING);
        expect(again.results.map((wallet) => wallet.address)).toEqual(expectedAddresses(state, 200));
        await state.catalogue.dispose();
    }, 60_000);
});

describe("the wallet catalogue after many wallets changed at once", () => {
    it("takes the changes in slices, yielding to the event loop, and answers with the state of that moment", async () => {
        const state = createWalletState(20_000, 9);
        const wallets = state.repository.allByAddress();
        await state.catalogue.page({ offset: 0, limit: 10 }, SORTING);
        for (const [index, wallet] of wallets.entries()) {
            if (index % 4 !== 0) {
                wallet.setNonce(wallet.getNonce().plus(Utils.BigNumber.make(index % 7)));
            }
        }
        let turns = 0;
        const counting = setInterval(() => turns++, 0);
        const page = await state.catalogue.page({ offset: 0, limit: 200 }, SORTING);
        clearInterval(counting);
        expect(turns).toBeGreaterThan(0); // the catalogue yielded while it caught up
        expect(page.results.map((wallet) => wallet.address)).toEqual(expectedAddresses(state, 200));
        expect(page.totalCount).toBe(wallets.length);
        await state.catalogue.dispose();
    }, 60_000);
});

describe("the wallet catalogue's first listing", () => {
    it("sends every wallet to its new thread in small messages, none of them in the turn of the request that asked", async () => {
        const state = createWalletState(3_000, 5);
        const post = Worker.prototype.postMessage;
        const sent: number[] = [];
        let asking = false;
        let sentWhileAsking = 0;
        const spy = jest.spyOn(Worker.prototype, "postMessage").mockImplementation(function (this: Worker, message) {
            const { kind, wallets } = message as { kind: string; wallets?: unknown[] };
            if (kind === "put") {
                sent.push(wallets?.length ?? 0);
                sentWhileAsking += asking ? 1 : 0;
            }
            post.call(this, message);
        });
        try {
            asking = true;
            const asked = state.catalogue.page({ offset: 0, limit: 200 }, SORTING);
            asking = false;
            const page = await asked;
            expect(sentWhileAsking).toBe(0);
            expect(Math.max(...sent)).toBeLessThanOrEqual(256);
            expect(sent.reduce((total, count) => total + count, 0)).toBe(state.repository.allByAddress().length);
            expect(page.results.map((wallet) => wallet.address)).toEqual(expectedAddresses(state, 200));
        } finally {
            spy.mockRestore();
            await state.catalogue.dispose();
        }
    }, 60_000);
});

describe("the wallet catalogue's pages", () => {
    it("all carry one frozen meta, which core-api's envelope copies (a new one per page was promoted to the node's old generation)", async () => {
        const state = createWalletState(500, 13);
        try {
            const first = await state.catalogue.page({ offset: 0, limit: 10 }, SORTING);
            const second = await state.catalogue.page({ offset: 10, limit: 10 }, SORTING);
            expect(first.meta).toEqual({ totalCountIsEstimate: false });
            expect(second.meta).toBe(first.meta);
            expect(Object.isFrozen(first.meta)).toBe(true);
        } finally {
            await state.catalogue.dispose();
        }
    }, 60_000);
});

describe("the wallet catalogue's answers in a burst", () => {
    it("takes one page a turn of the event loop when the thread answers several at once", async () => {
        const state = createWalletState(2_000, 11);
        const orders: Contracts.Search.Sorting[] = [
            SORTING,
            [{ property: "balance", direction: "asc" }],
            [{ property: "nonce", direction: "asc" }],
            [{ property: "address", direction: "desc" }],
        ];
        try {
            for (const order of orders) {
                await state.catalogue.page({ offset: 0, limit: 10 }, order);
            }
            const turns = turnCounter();
            const answeredIn = await Promise.all(
                orders.map((order) => state.catalogue.page({ offset: 0, limit: 100 }, order).then(() => turns.turn)),
            );
            turns.stop();
            expect(new Set(answeredIn).size).toBe(orders.length);
        } finally {
            await state.catalogue.dispose();
        }
    }, 60_000);
});

describe("the wallet catalogue after a block", () => {
    it("brings the lists it keeps up to date before anyone asks, and ends its thread once disposed", async () => {
        const state = createWalletState(5_000, 13);
        const wallets = state.repository.allByAddress();
        const events = state.app.get<Contracts.Kernel.EventDispatcher>(Container.Identifiers.EventDispatcherService);
        await state.catalogue.page({ offset: 0, limit: 10 }, SORTING);
        const applyBlock = async (): Promise<void> => {
            for (let index = 0; index < 50; index++) {
                const wallet = wallets[(index * 97) % wallets.length];
                wallet.setNonce(wallet.getNonce().plus(Utils.BigNumber.ONE));
            }
            await events.dispatch("block.applied", {});
        };
        const before = await state.catalogue.threadState();
        await applyBlock();
        // No listing is asked: the block alone sends the changes and has the list patched.
        const after = await eventually(async () => {
            const now = await state.catalogue.threadState();
            return now && now.version > (before?.version ?? 0) && now.lists[0] === now.version ? now : undefined;
        });
        expect(after.lists).toHaveLength(1);
        const page = await state.catalogue.page({ offset: 0, limit: 200 }, SORTING);
        expect(page.results.map((wallet) => wallet.address)).toEqual(expectedAddresses(state, 200));

        const thread = state.catalogue.thread;
        expect(thread).toBeDefined();
        const exited = new Promise((resolve) => thread?.once("exit", resolve));
        await state.catalogue.dispose();
        await exited;
        await applyBlock();
        expect(state.catalogue.thread).toBeUndefined();
        await expect(state.catalogue.page({ offset: 0, limit: 10 }, SORTING)).rejects.toThrow(/stopped/);
    }, 60_000);
});

describe("the wallet catalogue when its thread dies", () => {
    it("says so, starts a new thread with the next listing, and answers as before", async () => {
        const warnings: string[] = [];
        const state = createWalletState(3_000, 21);
        const catalogue = new WalletCatalogue(state.repository, { onThreadError: (message) => warnings.push(message) });
        state.app
            .get<Contracts.Kernel.EventDispatcher>(Container.Identifiers.EventDispatcherService)
            .listen("wallet.property.set", {
                handle: ({ data }) =>
                    catalogue.changed((data as { wallet: Contracts.State.Wallet }).wallet.getAddress()),
            });
        try {
            await catalogue.page({ offset: 0, limit: 10 }, SORTING);
            const first = catalogue.thread;
            await first?.terminate();
            expect(warnings).toEqual([expect.stringMatching(/wallet thread stopped/)]);
            const wallets = state.repository.allByAddress();
            wallets[17].setNonce(wallets[17].getNonce().plus(Utils.BigNumber.make(1_000)));

            const page = await catalogue.page({ offset: 0, limit: 200 }, SORTING);
            expect(catalogue.thread).toBeDefined();
            expect(catalogue.thread).not.toBe(first);
            expect(page.results.map((wallet) => wallet.address)).toEqual(expectedAddresses(state, 200));
            expect(page.results[0].address).toBe(wallets[17].getAddress());
            expect(page.totalCount).toBe(wallets.length);
        } finally {
            await catalogue.dispose();
            await state.catalogue.dispose();
        }
    }, 60_000);
});
