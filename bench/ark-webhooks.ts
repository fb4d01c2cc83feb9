import "reflect-metadata";

import { ServiceProvider as ArkWebhooksProvider } from "@arkecosystem/core-webhooks";
import { Application, Container, Contracts, Providers, Services } from "@arkecosystem/core-kernel";
import { mkdirSync, writeFileSync } from "fs";
import { join } from "path";

const silent = { info: () => undefined, debug: () => undefined, warning: () => undefined, error: () => undefined };

export interface ArkWebhooks {
    app: Contracts.Kernel.Application;
    url: string;
    /** ARK's listener, as the kernel calls it for each event. */
    listener: Contracts.Kernel.EventListener;
    stop(): Promise<void>;
}

/**
 * ARK's @arkecosystem/core-webhooks 3.9.1, registered and booted by its own service provider in a
 * core-kernel application, with its register in `<cache>/webhooks.json` (seeded when given).
 */
export const startArkWebhooks = async (
    dir: string,
    port: number,
    seed: object[] = [],
    enabled = true,
): Promise<ArkWebhooks> => {
    const app = new Application(new Container.Container());
    const cache = join(dir, "cache");
    mkdirSync(cache, { recursive: true });
    if (seed.length > 0) {
        writeFileSync(join(cache, "webhooks.json"), JSON.stringify({ webhooks: seed }));
    }
    app.bind("path.cache").toConstantValue(cache);
    app.bind(Container.Identifiers.LogService).toConstantValue(silent);
    app.bind(Container.Identifiers.EventDispatcherService).to(Services.Events.MemoryEventDispatcher).inSingletonScope();
    const provider = app.resolve(ArkWebhooksProvider);
    const configuration = app.resolve(Providers.PluginConfiguration).from("@arkecosystem/core-webhooks", {
        enabled,
        server: { http: { host: "127.0.0.1", port }, whitelist: ["127.0.0.1"] },
        timeout: 1500,
    });
    provider.setConfig(configuration);
    // Its listener reads the configuration from the container, as the kernel's plugin loader binds it.
    app.bind(Container.Identifiers.PluginConfiguration)
        .toConstantValue(configuration)
        .whenTargetTagged("plugin", "@arkecosystem/core-webhooks");
    await provider.register();
    await provider.boot();
    const dispatcher = app.get<Services.Events.MemoryEventDispatcher>(Container.Identifiers.EventDispatcherService);
    const listeners = dispatcher.getListeners("*");
    return {
        app,
        url: `http://127.0.0.1:${port}/api`,
        listener: listeners[0],
        stop: async () => {
            await provider.dispose();
        },
    };
};
