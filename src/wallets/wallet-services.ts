import { Container, Contracts, Providers } from "@arkecosystem/core-kernel";

import { Identifiers } from "../identifiers";
import { WalletRoutes } from "./wallet-routes";
import { WalletCatalogue } from "./wallet-catalogue";
import { WalletsController } from "./wallets-controller";

const CORE_API = "@arkecosystem/core-api";

// Every change of a wallet of the node's state, and the blocks that bring them.
const STATE_CHANGES = [
    "wallet.property.set",
    "wallet.attribute.set",
    "wallet.attribute.forget",
    "block.applied",
    "block.reverted",
];

export interface WalletServices {
    routes: WalletRoutes;
    /** Stops following the node's state. */
    dispose(): void;
}

/**
 * Wires the wallet routes to the node: core-api's controller and services (so answers are
 * core-api's), and a catalogue that is invalidated by every state change. Undefined when the node
 * runs without core-api, whose configuration and services the routes share.
 */
export const createWalletServices = (app: Contracts.Kernel.Application): WalletServices | undefined => {
    if (!app.container.isBoundTagged(Container.Identifiers.PluginConfiguration, "plugin", CORE_API)) {
        return undefined;
    }
    const apiConfiguration = app.getTagged<Providers.PluginConfiguration>(
        Container.Identifiers.PluginConfiguration,
        "plugin",
        CORE_API,
    );
    const catalogue = new WalletCatalogue(
        app.getTagged<Contracts.State.WalletRepository>(Container.Identifiers.WalletRepository, "state", "blockchain"),
        app.get(Container.Identifiers.StandardCriteriaService),
    );
    if (!app.isBound(Identifiers.WalletCatalogue)) {
        app.bind(Identifiers.WalletCatalogue).toConstantValue(catalogue);
    } else {
        app.rebind(Identifiers.WalletCatalogue).toConstantValue(catalogue);
    }
    const events = app.get<Contracts.Kernel.EventDispatcher>(Container.Identifiers.EventDispatcherService);
    const invalidate: Contracts.Kernel.EventListener = { handle: () => catalogue.invalidate() };
    const unsubscribes = STATE_CHANGES.map((event) => events.listen(event, invalidate));
    return {
        routes: {
            controller: app.resolve(WalletsController),
            options: { maxPageSize: apiConfiguration.getOptional<number>("plugins.pagination.limit", 100) },
        },
        dispose: () => unsubscribes.forEach((unsubscribe) => unsubscribe()),
    };
};
