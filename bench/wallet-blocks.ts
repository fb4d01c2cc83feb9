import { Container, Contracts } from "@arkecosystem/core-kernel";
import { Utils } from "@arkecosystem/crypto";

import { BareWalletState } from "../__tests__/support/wallet-state";

export const WALLETS_PER_BLOCK = 300;

/**
 * What block number `block` does to the state: a few hundred wallets' balances and nonces grow.
 * Additions only, so two states given the same blocks, in any order, are equal.
 */
export const applyBlock = (state: BareWalletState, wallets: readonly Contracts.State.Wallet[], block: number): void => {
    for (let index = 0; index < WALLETS_PER_BLOCK; index++) {
        const wallet = wallets[(block * 7_919 + index * 104_729) % wallets.length];
        wallet.setBalance(wallet.getBalance().plus(Utils.BigNumber.make(1 + index)));
        wallet.setNonce(wallet.getNonce().plus(Utils.BigNumber.ONE));
    }
    state.app
        .get<Contracts.Kernel.EventDispatcher>(Container.Identifiers.EventDispatcherService)
        .dispatchSync("block.applied", {});
};
