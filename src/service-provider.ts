import { Container, Contracts, Providers } from "@arkecosystem/core-kernel";
import Hapi from "@hapi/hapi";
import { join } from "path";

import { configSchema } from "./config/schema";
import { PluginOptions, resolveOptions } from "./config/options";
import { Webhook } from "./contracts";
import { DeliveryDispatcher, DeliveryReport } from "./delivery/dispatcher";
import { DeliverySender } from "./delivery/sender";
import { compileTargetPolicy } from "./delivery/target-policy";
import { KernelEventListener } from "./events/listener";
import { WebhookIndex } from "./events/webhook-index";
import { DeliveriesController } from "./http/controllers/deliveries-controller";
import { presentWebhook } from "./http/controllers/webhooks-controller";
import { ServiceController } from "./http/controllers/service-controller";
import { WebhooksController } from "./http/controllers/webhooks-controller";
import { registerDeliveryRoutes } from "./http/routes/deliveries";
import { registerServiceRoutes } from "./http/routes/service";
import { registerWebhookRoutes } from "./http/routes/webhooks";
import { createHttpServer } from "./http/server";
import { Identifiers } from "./identifiers";
import { markArkImportDone, readArkWebhooks } from "./store/ark-import";
import { openStore, StoreConnections } from "./store/database";
import { DeliveryStore } from "./store/delivery-store";
import { WebhookStore } from "./store/webhook-store";
import { WriteBatcher } from "./store/write-batcher";
import { WebhookRegister } from "./webhooks/webhook-register";

export const WEBHOOK_EVENTS = { broadcasted: "webhooks.broadcasted", failed: "webhooks.failed" } as const;

interface Parts {
    options: PluginOptions;
    file: string;
    store: StoreConnections;
    writes: WriteBatcher;
    index: WebhookIndex;
    register: WebhookRegister;
    outbox: DeliveryStore;
    listener: KernelEventListener;
    sender: DeliverySender;
    dispatcher: DeliveryDispatcher;
}

export class ServiceProvider extends Providers.ServiceProvider {
    private parts: Parts | undefined;
    private server: Hapi.Server | undefined;
    private stopListening: (() => void) | undefined;
    private cleanup: NodeJS.Timeout | undefined;

    /** Opens the register and builds every part; nothing runs until boot(). */
    public async register(): Promise<void> {
        const options = resolveOptions(this.config().all() as unknown as PluginOptions);
        if (!options.enabled) {
            return;
        }
        const file = options.storage.path || join(this.app.dataPath(), "core-wallet-webhooks", "webhooks.sqlite");
        const store = openStore(file);
        const writes = new WriteBatcher(store.register);
        const index = new WebhookIndex();
        const webhookStore = new WebhookStore(store.register);
        const register = new WebhookRegister(webhookStore, writes, index);
        const outbox = new DeliveryStore(store.outbox);
        const sender = new DeliverySender({
            timeoutMs: options.delivery.timeoutMs,
            connectionsPerTarget: options.delivery.concurrencyPerTarget,
            policy: compileTargetPolicy(options.delivery),
            userAgent: `core-wallet-webhooks/${this.version() ?? "0"}`,
        });
        const dispatcher = new DeliveryDispatcher(options.delivery, {
            outbox,
            sender,
            findWebhook: (id) => webhookStore.findById(id),
            disableWebhook: async (id, reason) => {
                await register.setEnabled(id, false);
                this.logger().warning(`core-wallet-webhooks disabled webhook ${id}: ${reason}`);
            },
            onReport: (report) => this.announce(report),
            onError: (error) => this.logger().error(`core-wallet-webhooks delivery error: ${String(error)}`),
        });
        const listener = new KernelEventListener({
            index,
            enqueue: (deliveries) => outbox.enqueue(deliveries),
            onQueued: () => dispatcher.wake(),
            onError: (error, event) =>
                this.logger().error(`core-wallet-webhooks could not queue deliveries of ${event}: ${String(error)}`),
        });
        this.parts = { options, file, store, writes, index, register, outbox, listener, sender, dispatcher };

        this.app.bind(Identifiers.WebhookRegister).toConstantValue(register);
        this.app.bind(Identifiers.DeliveryStore).toConstantValue(outbox);
        this.app.bind(Identifiers.Listener).toConstantValue(listener);
    }

    /** Imports ARK's register once, loads the index, then serves, delivers and listens, in that order. */
    public override async boot(): Promise<void> {
        const parts = this.requireParts();
        await this.importArkWebhooks(parts);
        parts.register.loadIndex();
        this.server = await this.createServer(parts);
        await this.server.start();
        parts.dispatcher.start();
        this.stopListening = this.events().listen("*", parts.listener);
        this.cleanup = setInterval(() => this.purgeOldDeliveries(parts), 60 * 60 * 1000);
        this.cleanup.unref();
        this.purgeOldDeliveries(parts);
        this.logger().info(`core-wallet-webhooks listening at ${this.server.info.uri}/api, register ${parts.file}`);
    }

    /** Undoes boot() in reverse order and closes the register; leaves no timer, socket or listener. */
    public override async dispose(): Promise<void> {
        this.stopListening?.();
        this.stopListening = undefined;
        clearInterval(this.cleanup);
        if (this.parts) {
            await this.parts.dispatcher.stop();
        }
        await this.server?.stop({ timeout: 5000 });
        this.server = undefined;
        if (this.parts) {
            this.parts.writes.flush();
            await this.parts.sender.close();
            this.parts.store.close();
            this.parts = undefined;
        }
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

    private async createServer(parts: Parts): Promise<Hapi.Server> {
        const { options, register, outbox, listener, dispatcher } = parts;
        const limits = options.limits;
        const info = { name: this.name() ?? "core-wallet-webhooks", version: this.version() ?? "0" };
        return createHttpServer(
            {
                host: options.server.http.host,
                port: options.server.http.port,
                whitelist: options.server.whitelist,
                apiKey: options.server.apiKey,
                bodyBytes: limits.bodyBytes,
            },
            (server, prefix) => {
                registerServiceRoutes(server, new ServiceController(info, listener.stats, () => outbox.pendingCount()));
                registerWebhookRoutes(server, new WebhooksController(register, prefix), limits);
                registerDeliveryRoutes(
                    server,
                    new DeliveriesController(register, outbox, () => dispatcher.wake(), prefix),
                    limits,
                );
            },
        );
    }

    private async importArkWebhooks(parts: Parts): Promise<void> {
        const now = Date.now();
        const found = readArkWebhooks(parts.store.register, this.app.cachePath("webhooks.json"), now);
        if (!found) {
            return;
        }
        const added = await parts.register.restore(found.imported, () =>
            markArkImportDone(parts.store.register, found.imported.length, now),
        );
        this.logger().info(`core-wallet-webhooks imported ${added.length} webhooks of @arkecosystem/core-webhooks`);
        for (const reason of found.skipped) {
            this.logger().warning(`core-wallet-webhooks skipped an entry of webhooks.json: ${reason}`);
        }
    }

    private purgeOldDeliveries(parts: Parts): void {
        const cutoff = Date.now() - parts.options.delivery.retentionDays * 24 * 60 * 60 * 1000;
        parts.outbox.purgeFinishedBefore(cutoff);
    }

    private announce(report: DeliveryReport): void {
        const { webhook, decision, outcome, durationMs, delivery } = report;
        const data = {
            executionTime: durationMs,
            webhook: presentWebhook(webhook as Webhook),
            deliveryId: delivery.id,
            attempt: delivery.attempts,
            status: decision.status,
            statusCode: outcome.result.kind === "response" ? outcome.result.statusCode : null,
        };
        if (decision.status === "delivered") {
            void this.events().dispatch(WEBHOOK_EVENTS.broadcasted, data);
        } else {
            const error =
                outcome.result.kind === "response" ? `HTTP ${outcome.result.statusCode}` : outcome.result.message;
            void this.events().dispatch(WEBHOOK_EVENTS.failed, { ...data, error });
        }
    }

    private requireParts(): Parts {
        if (!this.parts) {
            throw new Error("core-wallet-webhooks was booted without being registered");
        }
        return this.parts;
    }

    private events(): Contracts.Kernel.EventDispatcher {
        return this.app.get<Contracts.Kernel.EventDispatcher>(Container.Identifiers.EventDispatcherService);
    }

    private logger(): Contracts.Kernel.Logger {
        return this.app.get<Contracts.Kernel.Logger>(Container.Identifiers.LogService);
    }
}
