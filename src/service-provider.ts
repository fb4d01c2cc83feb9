import { Container, Contracts, Providers } from "@arkecosystem/core-kernel";
import { join } from "path";

import { parseOptions } from "./config/options";
import { configSchema } from "./config/schema";
import { heardBesides } from "./events/kernel-listeners";
import { Identifiers } from "./identifiers";
import { WebhookPlugin } from "./plugin";
import { createWalletServices, WalletServices } from "./wallets/wallet-services";

export class ServiceProvider extends Providers.ServiceProvider {
    private plugin: WebhookPlugin | undefined;
    private stopListening: (() => void) | undefined;
    private wallets: WalletServices | undefined;

    /** Opens the register and builds every part; nothing runs until boot(). */
    public async register(): Promise<void> {
        const options = parseOptions(this.config().all());
        if (!options.enabled) {
            return;
        }
        const logger = this.app.get<Contracts.Kernel.Logger>(Container.Identifiers.LogService);
        const events = this.app.get<Contracts.Kernel.EventDispatcher>(Container.Identifiers.EventDispatcherService);
        this.plugin = new WebhookPlugin(options, {
            file: options.storage.path || join(this.app.dataPath(), "core-wallet-webhooks", "webhooks.sqlite"),
            name: this.name() ?? "core-wallet-webhooks",
            version: this.version() ?? "0.0.0",
            logger,
            dispatchEvent: (name, data) => void events.dispatch(name, data),
            isHeard: heardBesides(events, () => this.plugin?.listener),
            arkWebhooksFile: this.app.cachePath("webhooks.json"),
        });
        this.app.bind(Identifiers.WebhookRegister).toConstantValue(this.plugin.register);
        this.app.bind(Identifiers.DeliveryStore).toConstantValue(this.plugin.outbox);
        this.app.bind(Identifiers.Listener).toConstantValue(this.plugin.listener);
    }

    /** Serves and delivers, then listens: the listener is the last part to start. */
    public override async boot(): Promise<void> {
        const plugin = this.requirePlugin();
        const logger = this.app.get<Contracts.Kernel.Logger>(Container.Identifiers.LogService);
        // Resolved at boot, when every plugin of the node (core-api, core-state) has registered.
        this.wallets = createWalletServices(this.app, plugin.options.threads.niceness);
        if (!this.wallets) {
            logger.warning("core-wallet-webhooks serves no wallet routes: @arkecosystem/core-api is not in this node");
        }
        await plugin.start(this.wallets?.routes);
        const events = this.app.get<Contracts.Kernel.EventDispatcher>(Container.Identifiers.EventDispatcherService);
        this.stopListening = events.listen("*", plugin.listener);
        logger.info(`core-wallet-webhooks listening at ${plugin.uri}, register ${plugin.file}`);
    }

    /** Undoes boot() in reverse order: the listener first, the file last. */
    public override async dispose(): Promise<void> {
        this.stopListening?.();
        this.stopListening = undefined;
        await this.plugin?.stop();
        this.plugin = undefined;
        await this.wallets?.dispose();
        this.wallets = undefined;
    }

    public override async bootWhen(): Promise<boolean> {
        return this.config().get<boolean>("enabled") === true;
    }

    /** A bad option or an unusable register stops the node rather than running without webhooks. */
    public override async required(): Promise<boolean> {
        return true;
    }

    public override configSchema(): object {
        return configSchema;
    }

    private requirePlugin(): WebhookPlugin {
        if (!this.plugin) {
            throw new Error("core-wallet-webhooks was booted without being registered");
        }
        return this.plugin;
    }
}
