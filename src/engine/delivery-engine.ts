import { performance } from "perf_hooks";

import { OriginLoad, Webhook } from "../contracts";
import { PluginOptions } from "../config/options";
import { announceAttempt } from "../delivery/announcer";
import { DeliveryDispatcher, DeliveryReport } from "../delivery/dispatcher";
import { JournalExpander } from "../delivery/journal-expander";
import { Retention } from "../delivery/retention";
import { DeliverySender, Resolver } from "../delivery/sender";
import { compileTargetPolicy } from "../delivery/target-policy";
import { RegexpPool } from "../events/regexp-pool";
import { WebhookIndex } from "../events/webhook-index";
import { openEngineConnection, SqliteDatabase } from "../store/database";
import { deliveryIdScheme } from "../store/delivery-id";
import { DeliveryStore } from "../store/delivery-store";
import { EventJournal } from "../store/event-journal";
import { JournalReader } from "../store/journal-reader";
import { journalFolderOf } from "../store/journal-segments";
import { StoragePart } from "../store/storage-health";
import { WebhookStore } from "../store/webhook-store";
import { ThrottledLog } from "../logging/throttled-log";
import { EngineMetrics } from "./engine-metrics";
import { KernelAnnouncement, LogLevel } from "./messages";

/** What the engine needs of the node's thread, wherever the engine runs. */
export interface EngineHost {
    /** A kernel event to dispatch on the node's thread. */
    announce(event: KernelAnnouncement): void;
    /** Disables a webhook through the register (the node's thread owns it); true when this call changed it. */
    disable(webhookId: string, reason: string): Promise<boolean>;
    storageFailed(part: StoragePart, error: unknown): void;
    storageSucceeded(part: StoragePart): void;
    log(level: LogLevel, message: string): void;
}

export interface EngineSetup {
    file: string;
    options: PluginOptions;
    userAgent: string;
    /** DNS resolution of delivery targets; a function cannot cross threads, so only an engine in the node's thread takes one. */
    resolve?: Resolver;
}

/**
 * Reports storage failures to the host, and a success only for a part that had failed: the host's
 * StorageHealth is told what changes, not every write that goes through.
 */
class HealthReporter {
    private readonly failing = new Set<StoragePart>();

    public constructor(private readonly host: EngineHost) {}

    public failed(part: StoragePart, error: unknown): string {
        this.failing.add(part);
        this.host.storageFailed(part, error);
        return String(error);
    }

    public succeeded(part: StoragePart): void {
        if (this.failing.delete(part)) {
            this.host.storageSucceeded(part);
        }
    }
}

/**
 * Everything after "this event is owed": expansion of the journal into deliveries (the conditions
 * the listener had no time for), dispatch, signing, HTTP, outcomes, retries, auto-disable and
 * retention, on connections of its own. It runs in a thread of its own (engine-thread.ts); the
 * node's thread only journals and wakes it.
 */
export class DeliveryEngine {
    private readonly db: SqliteDatabase;
    private readonly index: WebhookIndex;
    private readonly outbox: DeliveryStore;
    private readonly sender: DeliverySender;
    private readonly dispatcher: DeliveryDispatcher;
    private readonly journal: JournalReader;
    private readonly retention: Retention;
    public readonly metrics: EngineMetrics;

    public constructor(
        setup: EngineSetup,
        private readonly host: EngineHost,
    ) {
        const { options } = setup;
        this.db = openEngineConnection(setup.file);
        this.index = new WebhookIndex({
            regexpInputChars: options.limits.regexpInputChars,
            regexps: new RegexpPool(options.limits.regexpPatterns),
        });
        this.outbox = new DeliveryStore(this.db);
        const health = new HealthReporter(host);
        this.sender = new DeliverySender({
            timeoutMs: options.delivery.timeoutMs,
            connectionsPerTarget: options.delivery.concurrencyPerTarget,
            policy: compileTargetPolicy(options.delivery),
            resolve: setup.resolve,
            userAgent: setup.userAgent,
        });
        const errors = new ThrottledLog((message) => host.log("error", message));
        this.journal = new JournalReader(this.db, new EventJournal(this.db), {
            folder: journalFolderOf(setup.file),
            onSkipped: (segment, bytes) =>
                host.log(
                    "warning",
                    `skipped ${bytes} bytes at the end of journal segment ${segment}: a record torn when the process stopped mid-write (its event was never acknowledged)`,
                ),
        });
        this.dispatcher = new DeliveryDispatcher(options.delivery, {
            outbox: this.outbox,
            expander: new JournalExpander({
                journal: this.journal,
                matcherOf: (id) => this.index.matcherOf(id),
                now: () => performance.now(),
                deliveryIds: deliveryIdScheme(options),
            }),
            sender: this.sender,
            findWebhook: (id) => this.index.get(id),
            disableWebhook: (id, reason) => host.disable(id, reason),
            health,
            onReport: (report) => this.reported(report),
            onError: (error) => errors.write("delivery", `delivery error: ${String(error)}`),
            makeRoom: () => this.db.pragma("wal_checkpoint(PASSIVE)"),
        });
        this.retention = new Retention(this.outbox, options.delivery.retentionDays, health);
        this.metrics = new EngineMetrics({
            pending: () => this.outbox.pendingCount(),
            dead: () => this.outbox.deadCount(),
            origins: () => this.dispatcher.origins.loads(),
        });
    }

    /** Loads the enabled webhooks from the file, then delivers what is owed. */
    public start(): void {
        for (const webhook of new WebhookStore(this.db).all()) {
            this.putWebhook(webhook);
        }
        this.dispatcher.start();
        this.retention.start();
    }

    public wake(webhookIds: readonly string[]): void {
        this.dispatcher.wake(webhookIds);
    }

    /** A webhook created or changed on the node's thread: its compiled conditions follow. */
    public putWebhook(webhook: Webhook): void {
        try {
            this.index.put(webhook);
        } catch {
            // The node's thread refused it already (and said so); here it only owes nothing.
            this.index.remove(webhook.id);
        }
    }

    public removeWebhook(id: string): void {
        this.index.remove(id);
    }

    public origins(): OriginLoad[] {
        return this.dispatcher.origins.loads();
    }

    /** Stops taking work, waits for the attempts under way and records them, then closes. */
    public async stop(): Promise<void> {
        this.retention.stop();
        await this.dispatcher.stop();
        await this.sender.close();
        this.journal.close();
        this.db.close();
    }

    private reported(report: DeliveryReport): void {
        this.metrics.attempted(report.decision.status, report.durationMs);
        announceAttempt(report, (name, data) => this.host.announce({ name, data }));
    }
}
