import "reflect-metadata";

import { defaults as coreApiDefaults } from "@arkecosystem/core-api/dist/defaults";
import { Identifiers as CoreApiIdentifiers } from "@arkecosystem/core-api/dist/identifiers";
import { commaArrayQuery } from "@arkecosystem/core-api/dist/plugins/comma-array-query";
import { dotSeparatedQuery } from "@arkecosystem/core-api/dist/plugins/dot-separated-query";
import { Ext as PaginationExt } from "@arkecosystem/core-api/dist/plugins/pagination/ext";
import { register as registerCoreApiWalletRoutes } from "@arkecosystem/core-api/dist/routes/wallets";
import * as CoreApiSchemas from "@arkecosystem/core-api/dist/schemas";
import { LockSearchService, WalletSearchService } from "@arkecosystem/core-api/dist/services";
import { Application, Container, Contracts, Providers, Services } from "@arkecosystem/core-kernel";
import { Wallets } from "@arkecosystem/core-state";
import { walletFactory } from "@arkecosystem/core-state/dist/wallets/wallet-factory";
import { Identities, Managers, Utils } from "@arkecosystem/crypto";
import Boom from "@hapi/boom";
import Hapi from "@hapi/hapi";

import { WalletCatalogue } from "../../src/wallets/wallet-catalogue";
import { WalletRoutes } from "../../src/wallets/wallet-routes";
import { createWalletServices } from "../../src/wallets/wallet-services";
import { Identifiers } from "../../src/identifiers";

const ATTRIBUTES = [
    "delegate",
    "delegate.username",
    "delegate.voteBalance",
    "delegate.rank",
    "delegate.resigned",
    "vote",
    "htlc",
    "htlc.locks",
    "ipfs",
    "ipfs.hashes",
];

/** Two listings over this state must never touch the transaction history; reaching it is a bug. */
const noTransactionHistory = new Proxy(
    {},
    {
        get: () => () => {
            throw new Error("the wallet listing fixture has no transaction history");
        },
    },
);

export interface WalletState {
    app: Contracts.Kernel.Application;
    repository: Contracts.State.WalletRepository;
    catalogue: WalletCatalogue;
    /** This plugin's wallet routes over the state. */
    routes: WalletRoutes;
    /** core-api 3.9.1's own wallet routes, plugins and validation over the same state. */
    coreApiServer(): Promise<Hapi.Server>;
}

/** A node's wallet state without this plugin: the application and its filled repository. */
export type BareWalletState = Pick<WalletState, "app" | "repository">;

/**
 * A real core-state WalletRepository (indexers, factory, event dispatcher) in a core-kernel
 * application, filled with synthetic wallets, and nothing of this plugin.
 */
export const createBareWalletState = (walletCount: number, seed = 1): BareWalletState => {
    Managers.configManager.setFromPreset("testnet");
    const app = new Application(new Container.Container());
    app.bind(Container.Identifiers.EventDispatcherService).to(Services.Events.MemoryEventDispatcher).inSingletonScope();
    app.bind(Container.Identifiers.StandardCriteriaService).to(Services.Search.StandardCriteriaService);
    app.bind(Container.Identifiers.PaginationService).to(Services.Search.PaginationService);
    app.bind(Container.Identifiers.WalletAttributes).to(Services.Attributes.AttributeSet).inSingletonScope();
    const attributes = app.get<Services.Attributes.AttributeSet>(Container.Identifiers.WalletAttributes);
    ATTRIBUTES.forEach((name) => attributes.set(name));
    Wallets.registerIndexers(app);
    app.bind(Container.Identifiers.WalletRepository)
        .to(Wallets.WalletRepository)
        .inSingletonScope()
        .when(Container.Selectors.anyAncestorOrTargetTaggedFirst("state", "blockchain"));
    app.bind(Container.Identifiers.WalletFactory)
        .toFactory(({ container }) =>
            walletFactory(
                container.get(Container.Identifiers.WalletAttributes),
                container.get(Container.Identifiers.EventDispatcherService),
            ),
        )
        .when(Container.Selectors.anyAncestorOrTargetTaggedFirst("state", "blockchain"));
    app.bind(Container.Identifiers.TransactionHistoryService).toConstantValue(noTransactionHistory);
    app.bind(Container.Identifiers.StateStore).toConstantValue(noTransactionHistory);
    app.bind(Container.Identifiers.PluginConfiguration)
        .toConstantValue(app.resolve(Providers.PluginConfiguration).from("@arkecosystem/core-api", coreApiDefaults))
        .whenTargetTagged("plugin", "@arkecosystem/core-api");
    app.bind(CoreApiIdentifiers.WalletSearchService).to(WalletSearchService);
    app.bind(CoreApiIdentifiers.LockSearchService).to(LockSearchService);

    const repository = app.getTagged<Contracts.State.WalletRepository>(
        Container.Identifiers.WalletRepository,
        "state",
        "blockchain",
    );
    fillRepository(repository, walletCount, seed);
    return { app, repository };
};

/**
 * The same state with this plugin's wallet services wired to it: the state core-api and this
 * plugin both read.
 */
export const createWalletState = (walletCount: number, seed = 1, threadNiceness = 0): WalletState => {
    const { app, repository } = createBareWalletState(walletCount, seed);
    // The plugin's own wiring: core-api's controller, the catalogue and its invalidation by wallet events.
    const services = createWalletServices(app, threadNiceness);
    if (!services) {
        throw new Error("the wallet services need core-api's configuration, which this fixture binds");
    }

    return {
        app,
        repository,
        catalogue: app.get<WalletCatalogue>(Identifiers.WalletCatalogue),
        routes: services.routes,
        coreApiServer: async () => {
            const server = new Hapi.Server({
                host: "127.0.0.1",
                port: 0,
                router: { stripTrailingSlash: true },
                routes: {
                    validate: {
                        options: { context: { configuration: { plugins: { pagination: { limit: 100 } } } } },
                        failAction: async (_request, _h, error) => Boom.badData(error?.message),
                    },
                },
            });
            Object.assign(server.app, { app, schemas: CoreApiSchemas });
            await server.register([{ plugin: commaArrayQuery }, { plugin: dotSeparatedQuery }]);
            // core-api's hapi-pagination plugin, as its index registers it (that module exports no types).
            const pagination = new PaginationExt({ query: { limit: { default: 100 } } });
            server.ext("onPreHandler", (request, h) => pagination.onPreHandler(request, h));
            server.ext("onPostHandler", (request, h) => pagination.onPostHandler(request, h));
            await server.register(
                { plugin: { name: "core-api-wallets", register: registerCoreApiWalletRoutes } },
                {
                    routes: { prefix: "/api" },
                },
            );
            return server;
        },
    };
};

/** Deterministic wallets: balances from 0 to beyond 2^53, some with public keys, delegates and votes. */
const fillRepository = (repository: Contracts.State.WalletRepository, count: number, seed: number): void => {
    let state = seed;
    const random = (): number => {
        state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
        return state / 2_147_483_648;
    };
    const delegates: string[] = [];
    for (let index = 0; index < count; index++) {
        const publicKey = Identities.PublicKey.fromPassphrase(`wallet ${seed} ${index}`);
        const address = Identities.Address.fromPublicKey(publicKey);
        const wallet = repository.findByAddress(address);
        // A quarter never sent: known by address only, like a fresh recipient.
        if (random() < 0.75) {
            wallet.setPublicKey(publicKey);
            repository.index(wallet);
        }
        const balance = Math.floor(random() * 10 ** (1 + Math.floor(random() * 17)));
        wallet.setBalance(Utils.BigNumber.make(random() < 0.05 ? 0 : balance));
        wallet.setNonce(Utils.BigNumber.make(Math.floor(random() * 20)));
        if (index % 50 === 0 && wallet.getPublicKey()) {
            wallet.setAttribute("delegate.username", `delegate_${index}`);
            wallet.setAttribute("delegate.voteBalance", Utils.BigNumber.make(Math.floor(random() * 1e15)));
            wallet.setAttribute("delegate.rank", delegates.length + 1);
            repository.index(wallet);
            delegates.push(wallet.getPublicKey() as string);
        } else if (delegates.length > 0 && random() < 0.3) {
            wallet.setAttribute("vote", delegates[Math.floor(random() * delegates.length)]);
        }
    }
};
