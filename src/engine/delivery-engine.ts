import { performance } from "perf_hooks";

import { OriginLoad, Webhook } from "../contracts";
import { PluginOptions } from "../config/options";
import { announcementOf, AttemptAnnouncement } from "../delivery/announcer";
import { OriginPauses } from "../store/origin-pauses";
import { DeliveryDispatcher, DeliveryReport } from "../delivery/dispatcher";
import { JournalExpander } from "../delivery/journal-expander";
import { DeliverySender, Resolver } from "../delivery/sender";
import { compileTargetPolicy } from "../delivery/target-policy";
import { compileMatcher, PayloadMatcher } from "../events/matcher";
import { RegexpPool } from "../events/regexp-pool";
import { WebhookIndex } from "../events/webhook-index";
import { openEngineConnection, SqliteDatabase } from "../store/database";
import { deliveryIdScheme } from "../store/delivery-id";
import { DeliveryStore } from "../store/delivery-store";
import { JournalReader } from "../store/journal-reader";
import { journalFolderOf } from "../store/journal-segments";
import { StoragePart } from "../store/storage-health";
import { WebhookStore } from "../store/webhook-store";
import { ThrottledLog } from "../logging/throttled-log";
import { EngineMetrics } from "./engine-metrics";
import { LogLevel } from "./messages";
import { postgresDriver, sqliteDriver, StorageDriver } from "./storage-drivers";

/** What the engine needs of the node's thread, wherever the engine runs. */
export interface EngineHost {
    /** A kernel event to dispatch on the node's thread. */
    announce(announcement: AttemptAnnouncement): void;
    /** Disables a webhook through the register (the node's thread owns it); true when this call changed it. */
    disable(webhookId: string, reason: string): Promise<boolean>;
    storageFailed(part: StoragePart, error: unknown): void;
    storageSucceeded(part: StoragePart): void;
    /** A damaged journal record of `bytes` was passed over (see JournalReader). */
    journalDamaged(bytes: number): void;
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
    /** The storage driver (options.storage.driver), chosen once here. */
    private readonly storage: StorageDriver;
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
        this.journal = new JournalReader(this.db, {
            folder: journalFolderOf(setup.file),
            onSkipped: (segment, bytes) =>
                host.log(
                    "warning",
                    `skipped ${bytes} bytes at the end of journal segment ${segment}: a record torn when the process stopped mid-write (its event was never acknowledged)`,
                ),
            onGroupLost: (segment, group, reason) =>
                host.log(
                    "error",
                    `journal segment ${segment}'s deferred group ${group} cannot be read (${reason}): its events are not delivered to the webhooks it listed (those without a condition or with a regexp one)`,
                ),
            onDamaged: (segment, offset, bytes) => {
                host.journalDamaged(bytes);
                host.log(
                    "error",
                    `journal segment ${segment} has a damaged record at byte ${offset}: ${bytes} bytes passed over to the next record that reads whole; the event in them is lost`,
                );
            },
            onSegmentLost: (segment, reason) =>
                host.log("error", `journal segment ${segment}, which the engine still needed: ${reason}`),
            onGroupUnreadable: (error) => health.failed("group", error),
            onUnreadableGroupsPassed: () => health.succeeded("group"),
        });
        const register = new WebhookStore(this.db);
        const always = compileMatcher([], "any", { regexpInputChars: 0, regexps: new RegexpPool(0) });
        const expander = new JournalExpander({
            journal: this.journal,
            // A webhook without conditions that the index lacks is owed its events all the same, as
            // one the listener matched would be: one created so lately that its news is still on its
            // way here, or one disabled since the event (its deliveries wait until it is enabled).
            matcherOf: (id): PayloadMatcher | undefined =>
                this.index.matcherOf(id) ?? (register.findById(id)?.conditions.length === 0 ? always : undefined),
            now: () => performance.now(),
            deliveryIds: deliveryIdScheme(options),
        });
        const driverSetup = {
            options,
            store: this.outbox,
            health,
            checkpoint: (): void => {
                this.db.pragma("wal_checkpoint(PASSIVE)");
            },
        };
        this.storage = options.storage.driver === "postgres" ? postgresDriver(driverSetup) : sqliteDriver(driverSetup);
        this.dispatcher = new DeliveryDispatcher(options.delivery, {
            outbox: this.storage.outbox,
            expander,
            sender: this.sender,
            findWebhook: (id: string) => this.index.get(id),
            disableWebhook: (id: string, reason: string) => host.disable(id, reason),
            health,
            onReport: (report: DeliveryReport) => this.reported(report),
            onError: (error: unknown) => errors.write("delivery", `delivery error: ${String(error)}`),
            pauses: new OriginPauses(this.db),
        });
        this.metrics = new EngineMetrics({
            pending: () => this.storage.counts().pending,
            dead: () => this.storage.counts().dead,
            origins: () => this.dispatcher.origins.loads(),
        });
    }

    /** Loads the enabled webhooks from the file, then delivers what is owed. */
    public start(): void {
        for (const webhook of new WebhookStore(this.db).all()) {
            this.indexWebhook(webhook);
        }
        this.dispatcher.start();
        this.storage.start(() => this.dispatcher.lookAgain());
    }

    public wake(webhookIds: readonly string[]): void {
        this.dispatcher.wake(webhookIds);
    }

    /** An operator asked for one of the webhook's deliveries now: see the dispatcher's resume(). */
    public resume(webhookId: string): void {
        this.dispatcher.resume(webhookId);
    }

    /** A webhook created or changed on the node's thread: its compiled conditions follow. */
    public putWebhook(webhook: Webhook): void {
        // Its first events may have been expanded before this news came (the journal is read on the
        // engine's own turns, the news is a message): the dispatcher then found no such webhook and
        // let its deliveries wait, so it is woken for them.
        if (this.indexWebhook(webhook) && webhook.enabled) {
            this.dispatcher.wake([webhook.id]);
        }
    }

    /** false when the webhook cannot be indexed. */
    private indexWebhook(webhook: Webhook): boolean {
        try {
            this.index.put(webhook);
            return true;
        } catch {
            // The node's thread refused it already (and said so); here it only owes nothing.
            this.index.remove(webhook.id);
            return false;
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
        await this.storage.stop();
        await this.dispatcher.stop();
        await this.storage.close();
        await this.sender.close();
        this.journal.close();
        this.db.close();
    }

    private reported(report: DeliveryReport): void {
        this.metrics.attempted(report.decision.status, report.durationMs);
        this.host.announce(announcementOf(report));
    }
}
