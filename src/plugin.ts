import Hapi from "@hapi/hapi";

import { SharedRegisterDriver } from "./cluster/shared-register-driver";
import { PluginOptions } from "./config/options";
import { JournalDamage, Webhook } from "./contracts";
import { Resolver } from "./delivery/sender";
import { EngineCallbacks, EngineHandle } from "./engine/engine-handle";
import { InlineEngine } from "./engine/inline-engine";
import { ThreadedEngine } from "./engine/threaded-engine";
import { KernelEventListener } from "./events/listener";
import { RegexpPool } from "./events/regexp-pool";
import { WebhookIndex } from "./events/webhook-index";
import { DeliveriesController } from "./http/controllers/deliveries-controller";
import { MetricsController } from "./http/controllers/metrics-controller";
import { ServiceController } from "./http/controllers/service-controller";
import { WebhooksController } from "./http/controllers/webhooks-controller";
import { registerDeliveryRoutes } from "./http/routes/deliveries";
import { registerMetricsRoute } from "./http/routes/metrics";
import { registerServiceRoutes } from "./http/routes/service";
import { registerWebhookRoutes } from "./http/routes/webhooks";
import { createWebhookSchema } from "./http/schemas/webhook";
import { createHttpServer } from "./http/server";
import { ThrottledLog } from "./logging/throttled-log";
import { Checkpointer } from "./store/checkpointer";
import { openStore, resumeAutoCheckpoints, StoreConnections, StoreOpenError } from "./store/database";
import { deliveryIdScheme } from "./store/delivery-id";
import { DeliveryStore } from "./store/delivery-store";
import { journalCursorOf } from "./store/journal-reader";
import { registerLostReason, journalFolderOf } from "./store/journal-segments";
import { JournalSpool } from "./store/journal-spool";
import { JournalWriter } from "./store/journal-writer";
import { isStorageError, StorageHealth } from "./store/storage-health";
import { WalSync } from "./store/wal-sync";
import { WriteBatcher } from "./store/write-batcher";
import { WalletRoutes, walletRoutesPlugin } from "./wallets/wallet-routes";
import { importArkRegister } from "./webhooks/ark-register-import";
import { DeliveryService } from "./webhooks/delivery-service";
import { PingLimiter } from "./webhooks/ping-limiter";
import { LocalRegisterDriver, RegisterDriver, RegisterParts } from "./webhooks/register-driver";
import { WebhookRegister } from "./webhooks/webhook-register";

const CHECKPOINT_INTERVAL_MS = 1000;
const SPOOL_RETRY_MS = 1000;
const JOURNAL_SEGMENT_BYTES = 64 * 1024 * 1024;

export interface PluginLogger {
    info(message: string): void;
    warning(message: string): void;
    error(message: string): void;
}

export interface PluginEnvironment {
    /** The SQLite file of the register and outbox. */
    file: string;
    name: string;
    version: string;
    logger: PluginLogger;
    /** Announces `webhooks.broadcasted` / `webhooks.failed` to the kernel. */
    dispatchEvent: (name: string, data: unknown) => void;
    /**
     * Whether a kernel listener besides the plugin's own hears events of this name: announcements
     * nobody would hear are not dispatched. Absent, every announcement is.
     */
    isHeard?: (name: string) => boolean;
    /** ARK's core-webhooks register, imported once when present. */
    arkWebhooksFile?: string;
    /**
     * DNS resolution of delivery targets; tests point names anywhere. A function cannot cross
     * threads, so with it the delivery engine runs in the node's thread.
     */
    resolve?: Resolver;
    /** Where the delivery engine runs: a thread of its own (the default), or the node's thread. */
    engine?: "thread" | "inline";
}

/**
 * Every part of the plugin, wired in order. The service provider builds one inside the node;
 * tests and benchmarks build the very same one around a real SQLite file and a real port.
 */
export class WebhookPlugin {
    public readonly store: StoreConnections;
    public readonly health: StorageHealth;
    public readonly index: WebhookIndex;
    public readonly register: WebhookRegister;
    public readonly journal: JournalWriter;
    public readonly outbox: DeliveryStore;
    public readonly spool: JournalSpool;
    public readonly listener: KernelEventListener;
    /** Everything after "this event is owed", in a thread of its own. */
    public readonly engine: EngineHandle;
    /** Journal records the engine passed over as damaged since start (GET /api, /metrics). */
    private readonly journalDamage: JournalDamage = { records: 0, bytes: 0 };
    public readonly deliveries: DeliveryService;
    private readonly writes: WriteBatcher;
    private readonly walSync: WalSync;
    /** Where the register and the deliveries the API shows live (options.storage.driver), chosen once. */
    private readonly storage: RegisterDriver;
    private server: Hapi.Server | undefined;
    private readonly checkpointer: Checkpointer;

    public constructor(
        public readonly options: PluginOptions,
        private readonly environment: PluginEnvironment,
    ) {
        const { logger, name } = environment;
        const lost = registerLostReason(environment.file);
        if (lost !== undefined) {
            throw new StoreOpenError(environment.file, lost);
        }
        this.store = openStore(environment.file);
        this.health = new StorageHealth(environment.file, {
            info: (message) => logger.info(`${name} ${message}`),
            warning: (message) => logger.warning(`${name} ${message}`),
        });
        const warnings = new ThrottledLog((message) => logger.warning(`${name} ${message}`));
        this.checkpointer = new Checkpointer({
            file: environment.file,
            intervalMs: CHECKPOINT_INTERVAL_MS,
            niceness: options.threads.niceness,
            onFailure: (reason) => {
                // A full disk fails every checkpoint: said once a minute, not once a second.
                warnings.write("checkpoint", `checkpoints in the event loop again: ${reason}`);
                // The engine's own connection checkpoints itself always (see openEngineConnection).
                if (this.store.register.open) {
                    resumeAutoCheckpoints(this.store);
                }
            },
            onFileGone: (reason) => this.health.failed("file", new Error(reason)),
        });
        this.index = new WebhookIndex(
            {
                regexpInputChars: options.limits.regexpInputChars,
                regexps: new RegexpPool(options.limits.regexpPatterns),
            },
            // Called in a later turn, once the journal below exists.
            (group, replaced) => this.journal.prepareGroup(group, replaced),
        );
        this.walSync = new WalSync(environment.file);
        this.writes = new WriteBatcher(this.store.register, () => this.walSync.sync());
        this.journal = new JournalWriter({
            folder: journalFolderOf(environment.file),
            segmentBytes: JOURNAL_SEGMENT_BYTES,
            readCursor: journalCursorOf(this.store.outbox),
        });
        this.outbox = new DeliveryStore(this.store.outbox);
        this.engine = this.createEngine();
        const errors = new ThrottledLog((message) => logger.error(`${name} ${message}`));
        const parts: RegisterParts = {
            db: this.store.register,
            writes: this.writes,
            index: this.index,
            observer: {
                changed: (webhook) => this.engine.webhookChanged(webhook),
                removed: (id) => this.engine.webhookRemoved(id),
            },
            outbox: this.outbox,
            resume: (webhookId) => this.engine.resume(webhookId),
            pings: new PingLimiter(options.limits.pingsPerMinute),
            onRefused: (webhook, reason) => this.leaveOut(webhook, reason),
        };
        this.storage =
            options.storage.driver === "postgres"
                ? new SharedRegisterDriver(parts, {
                      postgres: options.storage.postgres,
                      log: (level, message) => logger[level](`${name} ${message}`),
                  })
                : new LocalRegisterDriver(parts);
        this.register = this.storage.register;
        this.deliveries = this.storage.deliveries;
        this.spool = new JournalSpool(
            { maxBytes: options.storage.spoolMaxBytes, retryMs: SPOOL_RETRY_MS },
            {
                journal: this.journal,
                health: this.health,
                // The engine finds the webhooks owed in the journal; ids in a wake are for changes made elsewhere.
                onWritten: () => this.engine.wake(),
                logError: (message) => logger.error(`${name} ${message}`),
            },
        );
        this.listener = new KernelEventListener({
            index: this.index,
            journal: (event) => this.spool.append(event),
            matchingBudgetMs: options.limits.matchingBudgetMs,
            deliveryIds: deliveryIdScheme(options),
            relayName: this.storage.relayName,
            onError: (error, event) =>
                errors.write("listener", `could not queue the deliveries of ${event}: ${String(error)}`),
        });
    }

    /** Imports ARK's register once, loads the index, then serves and delivers. */
    public async start(wallets?: WalletRoutes): Promise<void> {
        this.checkpointer.start();
        await this.storage.open(() => this.importArkRegister());
        this.register.loadIndex((webhook, reason) => this.leaveOut(webhook, reason));
        const [someEvent = "transaction.applied"] = this.index.eventNames();
        this.listener.warmUp(someEvent, (event) => this.journal.rehearse(event));
        await this.engine.start();
        await this.storage.connect(() => this.importArkRegister());
        this.server = await this.createServer(wallets);
        await this.server.start();
    }

    /** Says that a webhook stays out of the index: its conditions do not compile (stored by a version that validated less). */
    private leaveOut(webhook: Webhook, reason: string): void {
        const { logger, name } = this.environment;
        logger.warning(`${name} leaves webhook ${webhook.id} out: its conditions do not compile (${reason})`);
    }

    /** Imports ARK's register once, when its file is there (with a shared register, into the shared one). */
    private async importArkRegister(): Promise<void> {
        const { arkWebhooksFile, logger, name } = this.environment;
        if (!arkWebhooksFile) {
            return;
        }
        const schema = createWebhookSchema(this.options.limits);
        await importArkRegister(arkWebhooksFile, {
            db: this.store.register,
            register: this.register,
            check: ({ event, target, enabled, conditions }) =>
                schema.validate({ event, target, enabled, conditions }).error?.message,
            log: {
                info: (line) => logger.info(`${name} ${line}`),
                warning: (line) => logger.warning(`${name} ${line}`),
            },
        });
    }

    public get file(): string {
        return this.environment.file;
    }

    public get uri(): string {
        return `${this.server?.info.uri ?? ""}/api`;
    }

    /** Undoes start() in reverse order, then closes the file: no timer, socket or handle is left. */
    public async stop(): Promise<void> {
        await this.engine.stop();
        await this.server?.stop({ timeout: 5000 });
        this.server = undefined;
        await this.storage.stop();
        this.spool.stop();
        this.journal.close();
        this.writes.flush();
        await this.walSync.close();
        await this.checkpointer.stop();
        this.store.close();
    }

    private createEngine(): EngineHandle {
        const { options, environment } = this;
        const { logger, name } = environment;
        const callbacks: EngineCallbacks = {
            dispatchEvent: environment.dispatchEvent,
            isHeard: environment.isHeard,
            disableWebhook: async (id, reason) => {
                const changed = await this.register.setEnabled(id, false);
                if (changed) {
                    logger.warning(`${name} disabled webhook ${id}: ${reason}`);
                }
                return changed;
            },
            health: this.health,
            journalDamaged: (bytes) => {
                this.journalDamage.records++;
                this.journalDamage.bytes += bytes;
            },
            log: (level, message) => logger[level](`${name} ${message}`),
        };
        const setup = { file: environment.file, options, userAgent: `${name}/${environment.version}` };
        const inline = environment.engine === "inline" || environment.resolve !== undefined;
        return inline
            ? new InlineEngine({ ...setup, resolve: environment.resolve }, callbacks)
            : new ThreadedEngine(setup, callbacks);
    }

    private async createServer(wallets: WalletRoutes | undefined): Promise<Hapi.Server> {
        const { options, register, journal, outbox, listener, spool, health, deliveries, engine } = this;
        const limits = options.limits;
        const info = { name: this.environment.name, version: this.environment.version };
        const server = await createHttpServer(
            {
                host: options.server.http.host,
                port: options.server.http.port,
                whitelist: options.server.whitelist,
                apiKey: options.server.apiKey,
                bodyBytes: limits.bodyBytes,
                storageFailure: (error) => (isStorageError(error) ? health.failed("request", error) : undefined),
            },
            async (server, prefix) => {
                registerServiceRoutes(
                    server,
                    new ServiceController(info, listener.stats, {
                        storage: () => health.snapshot(),
                        spool: () => spool.stats(),
                        register: () => this.storage.state(),
                        pendingDeliveries: () => outbox.pendingCount(),
                        journalBacklog: () => journal.backlog(),
                        origins: () => engine.origins(),
                        engine: () => ({ running: engine.running, restarts: engine.restarts }),
                        journalDamage: () => ({ ...this.journalDamage }),
                    }),
                );
                registerWebhookRoutes(server, new WebhooksController(register, prefix), limits);
                registerDeliveryRoutes(server, new DeliveriesController(register, deliveries, prefix), limits);
                if (wallets) {
                    await server.register({ plugin: walletRoutesPlugin, options: wallets });
                }
            },
        );
        registerMetricsRoute(
            server,
            new MetricsController({
                listener: listener.stats,
                journalBacklog: () => journal.backlog(),
                spool: () => spool.stats(),
                storage: () => health.snapshot(),
                engine: () => ({ running: engine.running, restarts: engine.restarts }),
                journalDamage: () => ({ ...this.journalDamage }),
                engineMetrics: () => engine.metrics(),
            }),
        );
        return server;
    }
}
