import { Container, Contracts, Providers } from "@arkecosystem/core-kernel";

import { Identifiers } from "../identifiers";
import { WalletRoutes } from "./wallet-routes";
import { WalletCatalogue } from "./wallet-catalogue";
import { WalletsController } from "./wallets-controller";

const CORE_API = "@arkecosystem/core-api";

// Every mutation of a core-state wallet dispatches this, synchronously, with the wallet.
const WALLET_CHANGED = "wallet.property.set";
// Blocks may create wallets without a wallet event.
const BLOCKS = ["block.applied", "block.reverted"];

const addressOf = (data: unknown): string | undefined => {
    const wallet = (data as { wallet?: { getAddress?: () => unknown } } | undefined)?.wallet;
    const address = typeof wallet?.getAddress === "function" ? wallet.getAddress() : undefined;
    return typeof address === "string" ? address : undefined;
};

export interface WalletServices {
    routes: WalletRoutes;
    /** Stops following the node's state and ends the wallet thread. */
    dispose(): Promise<void>;
}

/**
 * Wires the wallet routes to the node: core-api's controller and services (so answers are
 * core-api's), and a catalogue kept current by every wallet change. Undefined when the node
 * runs without core-api, whose configuration and services the routes share.
 */
export const createWalletServices = (
    app: Contracts.Kernel.Application,
    threadNiceness = 0,
): WalletServices | undefined => {
    if (!app.container.isBoundTagged(Container.Identifiers.PluginConfiguration, "plugin", CORE_API)) {
        return undefined;
    }
    const apiConfiguration = app.getTagged<Providers.PluginConfiguration>(
        Container.Identifiers.PluginConfiguration,
        "plugin",
        CORE_API,
    );
    const logger = app.isBound(Container.Identifiers.LogService)
        ? app.get<Contracts.Kernel.Logger>(Container.Identifiers.LogService)
        : undefined;
    const catalogue = new WalletCatalogue(
        app.getTagged<Contracts.State.WalletRepository>(Container.Identifiers.WalletRepository, "state", "blockchain"),
        { onThreadError: (message) => logger?.warning(message), threadNiceness },
    );
    if (!app.isBound(Identifiers.WalletCatalogue)) {
        app.bind(Identifiers.WalletCatalogue).toConstantValue(catalogue);
    } else {
        app.rebind(Identifiers.WalletCatalogue).toConstantValue(catalogue);
    }
    const events = app.get<Contracts.Kernel.EventDispatcher>(Container.Identifiers.EventDispatcherService);
    const onWalletChanged: Contracts.Kernel.EventListener = {
        handle: ({ data }) => {
            const address = addressOf(data);
            if (address !== undefined) {
                catalogue.changed(address);
            }
        },
    };
    const onBlock: Contracts.Kernel.EventListener = { handle: () => catalogue.invalidate() };
    const unsubscribes = [
        events.listen(WALLET_CHANGED, onWalletChanged),
        ...BLOCKS.map((event) => events.listen(event, onBlock)),
    ];
    return {
        routes: {
            controller: app.resolve(WalletsController),
            options: { maxPageSize: apiConfiguration.getOptional<number>("plugins.pagination.limit", 100) },
        },
        dispose: async () => {
            unsubscribes.forEach((unsubscribe) => unsubscribe());
            await catalogue.dispose();
        },
    };
};
