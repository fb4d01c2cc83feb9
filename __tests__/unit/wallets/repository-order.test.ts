import { Contracts } from "@arkecosystem/core-kernel";
import { Identities } from "@arkecosystem/crypto";

import { RepositoryOrder } from "../../../src/wallets/repository-order";
import { createBareWalletState } from "../../support/wallet-state";

const addressOf = (name: string): string => Identities.Address.fromPassphrase(name);

describe("RepositoryOrder: each wallet's place in core-state's address index", () => {
    const positionsInIndexOrder = (
        repository: Contracts.State.WalletRepository,
        order: RepositoryOrder,
        known: Map<string, number>,
    ): void => {
        for (const wallet of repository.allByAddress()) {
            const moved = order.take(wallet.getAddress());
            if (moved !== undefined) {
                known.set(wallet.getAddress(), moved);
            }
        }
    };

    it("gives a new or re-indexed wallet a position after every other, as the index's Map orders them", () => {
        const { repository } = createBareWalletState(0);
        const changed: string[] = [];
        const order = RepositoryOrder.follow(repository, (address) => changed.push(address));
        if (!order) {
            throw new Error("core-state 3.9.1's index is followed");
        }
        order.startPass();
        const wallets = ["a", "b", "c", "d"].map((name) => repository.findByAddress(addressOf(name)));
        const known = new Map<string, number>();
        positionsInIndexOrder(repository, order, known);

        repository.index(wallets[1]);
        repository.findByAddress(addressOf("e"));
        repository.index(wallets[0]);
        positionsInIndexOrder(repository, order, known);

        const byPosition = [...known.entries()].sort((left, right) => left[1] - right[1]).map(([address]) => address);
        expect(byPosition).toEqual(repository.allByAddress().map((wallet) => wallet.getAddress()));
        expect(byPosition).toEqual(["c", "d", "b", "e", "a"].map(addressOf));
        expect(changed).toEqual(expect.arrayContaining(["a", "b", "c", "d", "e"].map(addressOf)));
        order.stop();
    });

    it("records nothing before its first pass, and gives the index its methods back when stopped", () => {
        const { repository } = createBareWalletState(0);
        const index = repository.getIndex(Contracts.State.WalletIndexes.Addresses);
        const ownSet = index.set;
        const first = RepositoryOrder.follow(repository, () => undefined);
        const second = RepositoryOrder.follow(repository, () => undefined);
        repository.findByAddress(addressOf("before any pass"));
        expect(first?.take(addressOf("before any pass"))).toBeUndefined();

        second?.stop();
        second?.startPass();
        first?.startPass();
        repository.findByAddress(addressOf("after the second stopped"));
        expect(first?.take(addressOf("after the second stopped"))).toEqual(expect.any(Number));
        expect(second?.take(addressOf("after the second stopped"))).toBeUndefined();

        first?.stop();
        expect(index.set).toBe(ownSet);
    });
});
