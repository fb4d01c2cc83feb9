import { Delivery, Webhook } from "../contracts";
import { AttemptOutcome, DeliveryStore } from "../store/delivery-store";
import { OriginPauses } from "../store/origin-pauses";
import { StorageHealth, StoragePart } from "../store/storage-health";
import { attemptDelivery, DeliveryReport } from "./attempt";
import {
    EXPANSION_REST_MS,
    EXPANSION_SLICE_MS,
    failureBackoffMs,
    GONE_REASON,
    reportFailure,
    targetKey,
    WebhookBackoff,
} from "./dispatch-common";
import { DispatcherOptions } from "./dispatcher";
import { JournalExpander } from "./journal-expander";
import { OriginLimits } from "./origin-limits";
import { AttemptResult } from "./retry-policy";
import { DeliverySender } from "./sender";

/** The deliveries every relay shares (cluster/postgres-deliveries.ts): forwarded, claimed under a lease, recorded. */
export interface SharedOutbox {
    /** Returns the webhooks the shared register does not hold (yet), whose deliveries it did not take. */
    forward(deliveries: readonly Delivery[]): Promise<string[]>;
    /** The webhooks with a delivery due at `now`, enabled or not (a disabled one is passed over here). */
    dueWebhookIds(now: number): Promise<string[]>;
    claim(webhookId: string, now: number, limit: number, leaseUntil: number): Promise<Delivery[]>;
    recordAll(outcomes: readonly AttemptOutcome[]): Promise<void>;
    nextDueAfter(now: number): Promise<number | null>;
    cancelPending(webhookId: string, reason: string, now: number): Promise<number>;
    deadStreak(webhookId: string, window: number): Promise<number>;
}

export interface ClusterDispatcherOptions extends DispatcherOptions {
    /** How long a claimed delivery is this relay's; longer than an attempt may take. */
    leaseMs: number;
}

export interface ClusterDispatcherDependencies {
    /** This relay's own file: the deliveries its journal gave, kept until the shared outbox has them. */
    local: Pick<DeliveryStore, "oldestPending" | "remove">;
    shared: SharedOutbox;
    expander: Pick<JournalExpander, "expand">;
    sender: Pick<DeliverySender, "send">;
    /** An enabled webhook; undefined when it is disabled or deleted. */
    findWebhook: (id: string) => Webhook | undefined;
    disableWebhook: (id: string, reason: string) => Promise<boolean>;
    health: Pick<StorageHealth, "failed" | "succeeded">;
    onReport: (report: DeliveryReport) => void;
    /** Failures that are not the local file's (the shared database's among them); the caller throttles them. */
    onError: (error: unknown) => void;
    /** Retry-After pauses of origins, kept across a restart. */
    pauses?: OriginPauses;
    clock?: () => number;
    random?: () => number;
}

// Deliveries forwarded per statement, and statements per pass (the rest goes on in the next pass).
const FORWARD_BATCH = 500;
const FORWARD_BATCHES_PER_PASS = 8;
// Without a notice, the shared outbox is looked at this often: retries other relays scheduled,
// leases that ran out, notices lost while the connection was down.
const POLL_MS = 1_000;
const PASS_BACKOFF_MAX_MS = 5_000;

/**
 * Delivers from the outbox every relay shares (storage.driver "postgres"). Each pass turns this
 * relay's journal into deliveries in its own file, forwards them to the shared outbox (where a
 * delivery another relay forwarded already is one delivery, not two), and then claims due
 * deliveries, per webhook and within the caps, under a lease. Any relay delivers any delivery: a
 * relay that stops mid-attempt leaves leases that run out, and another relay claims them.
 *
 * Nothing waits on the database in the node's thread: this runs in the engine's. While the
 * database is out of reach, deliveries wait in this relay's file, outcomes wait in memory (and
 * nothing more is sent until they are written), and each failed pass waits longer before the next.
 */
export class ClusterDispatcher {
    public readonly origins: OriginLimits;
    private readonly inFlight = new Map<string, Promise<void>>();
    /** Webhooks that may have due deliveries: those forwarded, woken, or found by a look at the outbox. */
    private readonly active = new Set<string>();
    private readonly backoff = new WebhookBackoff();
    private readonly unrecorded = new Map<string, AttemptOutcome>();
    /**
     * Webhooks the shared register did not hold when their deliveries were forwarded (a relay
     * moving its own register in forwards before the move): their deliveries stay in this relay's
     * file, passed over until the next look (a second); a webhook deleted for good takes them
     * with it when this relay's copy follows the register.
     */
    private readonly unknownWebhooks = new Set<string>();
    private batch: { outcomes: AttemptOutcome[]; written: Promise<void> } | undefined;
    private probing = false;
    /** The next pass looks at the shared outbox for webhooks with due deliveries. */
    private lookAtSharedOutbox = true;
    private pumping = false;
    /** The pass under way: stop() waits for it, so that nothing touches the files after they close. */
    private pass: Promise<void> = Promise.resolve();
    private passAgain = false;
    private passFailures = 0;
    /** After a failed pass, wakes wait for the backoff: events arriving while PostgreSQL is down must not each try it. */
    private pausedUntil = 0;
    private rotation = 0;
    private timer: NodeJS.Timeout | undefined;
    private immediate: NodeJS.Immediate | undefined;
    private running = false;
    private readonly clock: () => number;
    private readonly random: () => number;

    public constructor(
        private readonly options: ClusterDispatcherOptions,
        private readonly dependencies: ClusterDispatcherDependencies,
    ) {
        this.clock = dependencies.clock ?? Date.now;
        this.random = dependencies.random ?? Math.random;
        this.origins = new OriginLimits(
            { floor: options.concurrencyPerTargetFloor, ceiling: options.concurrencyPerTarget },
            this.clock,
            dependencies.pauses,
        );
    }

    public start(): void {
        this.running = true;
        this.dependencies.pauses
            ?.running(this.clock())
            .forEach(({ origin, until }) => this.origins.restorePause(origin, until));
        this.lookAtSharedOutbox = true;
        this.wake();
    }

    /** Another relay made deliveries due (a notice), or this one may have missed some: look at the outbox. */
    public lookAgain(): void {
        this.lookAtSharedOutbox = true;
        this.unknownWebhooks.clear();
        this.wake();
    }

    public wake(webhookIds: Iterable<string> = []): void {
        for (const id of webhookIds) {
            this.active.add(id);
        }
        if (!this.running || this.clock() < this.pausedUntil) {
            return;
        }
        if (this.pumping) {
            this.passAgain = true;
            return;
        }
        this.immediate ??= setImmediate(() => {
            this.immediate = undefined;
            this.pass = this.pump();
        });
    }

    /**
     * An operator asked for one of the webhook's deliveries now (a redelivery, a ping): a
     * Retry-After pause of its origin ends, and the webhook is looked at.
     */
    public resume(webhookId: string): void {
        const webhook = this.dependencies.findWebhook(webhookId);
        if (webhook) {
            this.origins.resume(targetKey(webhook.target));
        }
        this.wake([webhookId]);
    }

    public async stop(): Promise<void> {
        this.running = false;
        clearTimeout(this.timer);
        if (this.immediate) {
            clearImmediate(this.immediate);
            this.immediate = undefined;
        }
        await this.pass;
        await Promise.allSettled([...this.inFlight.values()]);
        await this.batch?.written.catch(() => undefined);
        // Outcomes not written: their leases run out and they are delivered again, under the same id.
        await this.recordHeldOutcomes().catch((error: unknown) => this.report(error, "outcomes"));
    }

    public get load(): { inFlight: number; unrecorded: number } {
        return { inFlight: this.inFlight.size, unrecorded: this.unrecorded.size };
    }

    private async pump(): Promise<void> {
        if (!this.running || this.pumping) {
            return;
        }
        this.pumping = true;
        this.passAgain = false;
        clearTimeout(this.timer);
        let rest: number;
        let poll = true;
        try {
            const expansion = this.dependencies.expander.expand(EXPANSION_SLICE_MS);
            if (expansion.committed > 0) {
                this.dependencies.health.succeeded("deliveries");
            }
            const forwardedAll = await this.forwardLocal();
            await this.recordHeldOutcomes();
            const now = this.clock();
            if (this.lookAtSharedOutbox) {
                this.lookAtSharedOutbox = false;
                const due = await this.dependencies.shared.dueWebhookIds(now);
                due.forEach((id) => this.active.add(id));
            }
            await this.startDue(now);
            if (!expansion.drained || !forwardedAll) {
                rest = EXPANSION_REST_MS;
                poll = false;
            } else {
                // Attempts under way wake the next pass as they end; only an idle relay asks when work is due.
                rest = this.inFlight.size > 0 ? POLL_MS : await this.untilNextDue(now);
            }
            this.passFailures = 0;
        } catch (error) {
            this.passFailures++;
            this.lookAtSharedOutbox = true;
            this.report(error, "deliveries");
            rest = failureBackoffMs(this.passFailures, PASS_BACKOFF_MAX_MS);
            this.pausedUntil = this.clock() + rest;
        } finally {
            this.pumping = false;
        }
        if (this.passAgain && this.passFailures === 0) {
            this.wake();
        } else {
            this.sleep(rest, poll);
        }
    }

    /** Moves this relay's deliveries into the shared outbox, oldest first; true when none is left. */
    private async forwardLocal(): Promise<boolean> {
        for (let batch = 0; batch < FORWARD_BATCHES_PER_PASS; batch++) {
            const deliveries = this.dependencies.local.oldestPending(FORWARD_BATCH, [...this.unknownWebhooks]);
            if (deliveries.length === 0) {
                return true;
            }
            const unknown = new Set(await this.dependencies.shared.forward(deliveries));
            const written = deliveries.filter((delivery) => !unknown.has(delivery.webhookId));
            // Written there: a crash before this line forwards them again, and their ids make that harmless.
            this.dependencies.local.remove(written.map((delivery) => delivery.id));
            written.forEach((delivery) => this.active.add(delivery.webhookId));
            unknown.forEach((id) => this.unknownWebhooks.add(id));
            if (deliveries.length < FORWARD_BATCH) {
                return true;
            }
        }
        return false;
    }

    private async recordHeldOutcomes(): Promise<void> {
        if (this.unrecorded.size === 0) {
            return;
        }
        await this.dependencies.shared.recordAll([...this.unrecorded.values()]);
        this.unrecorded.clear();
        this.probing = false;
    }

    /** Claims due deliveries, webhook by webhook from a rotating start, until every slot is taken. */
    private async startDue(now: number): Promise<void> {
        const webhookIds = [...this.active];
        const first = this.rotation++ % Math.max(1, webhookIds.length);
        for (let visited = 0; visited < webhookIds.length && this.running; visited++) {
            const cap = this.probing ? 1 : this.options.concurrency;
            if (this.inFlight.size >= cap || this.unrecorded.size > 0) {
                return;
            }
            const webhookId = webhookIds[(first + visited) % webhookIds.length];
            if (this.backoff.until(webhookId) > now) {
                continue;
            }
            const webhook = this.dependencies.findWebhook(webhookId);
            if (!webhook) {
                this.active.delete(webhookId);
                continue;
            }
            const key = targetKey(webhook.target);
            const free = Math.min(cap - this.inFlight.size, this.origins.free(key));
            if (free <= 0) {
                continue;
            }
            const claimed = await this.dependencies.shared.claim(webhookId, now, free, now + this.options.leaseMs);
            if (claimed.length < free) {
                this.active.delete(webhookId);
            }
            for (const delivery of claimed) {
                if (!this.inFlight.has(delivery.id)) {
                    this.launch(delivery, webhook, key);
                }
            }
        }
    }

    private launch(delivery: Delivery, webhook: Webhook, key: string): void {
        this.origins.started(key);
        let answer: { result: AttemptResult; durationMs: number } | undefined;
        const attempt = this.run(delivery, webhook, (report) => {
            answer = { result: report.outcome.result, durationMs: report.durationMs };
        })
            .then(
                () => {
                    this.backoff.succeeded(webhook.id);
                },
                (error: unknown) => this.holdBack(webhook.id, error),
            )
            .finally(() => {
                this.inFlight.delete(delivery.id);
                this.origins.finished(key, answer?.result, answer?.durationMs ?? 0);
                // Its next deliveries may be due: claimed in the next pass.
                this.wake([webhook.id]);
            });
        this.inFlight.set(delivery.id, attempt);
    }

    private async run(delivery: Delivery, webhook: Webhook, onAnswer: (report: DeliveryReport) => void): Promise<void> {
        const report = await attemptDelivery(delivery, webhook, {
            sender: this.dependencies.sender,
            retryScheduleSeconds: this.options.retryScheduleSeconds,
            clock: this.clock,
            random: this.random,
        });
        onAnswer(report);
        try {
            await this.recordWithTurn(report.record);
        } catch (error) {
            // Sent but not written: kept, and nothing more is sent until it is.
            this.unrecorded.set(delivery.id, report.record);
            this.probing = true;
            throw error;
        }
        this.dependencies.onReport(report);
        await this.afterDecision(report);
    }

    /** Writes an outcome with the others of this turn of the loop, in one statement. */
    private recordWithTurn(outcome: AttemptOutcome): Promise<void> {
        if (!this.batch) {
            const outcomes: AttemptOutcome[] = [];
            const written = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
                this.batch = undefined;
                return this.dependencies.shared.recordAll(outcomes);
            });
            this.batch = { outcomes, written };
        }
        this.batch.outcomes.push(outcome);
        return this.batch.written;
    }

    private async afterDecision({ webhook, decision }: DeliveryReport): Promise<void> {
        if (decision.disableWebhook) {
            await this.dependencies.disableWebhook(webhook.id, GONE_REASON);
            await this.dependencies.shared.cancelPending(webhook.id, GONE_REASON, this.clock());
            this.active.delete(webhook.id);
        } else if (decision.status === "dead" && this.options.autoDisableAfterDeadDeliveries > 0) {
            const window = this.options.autoDisableAfterDeadDeliveries;
            const streak = await this.dependencies.shared.deadStreak(webhook.id, window);
            if (streak >= window) {
                await this.dependencies.disableWebhook(webhook.id, `${streak} deliveries in a row died`);
            }
        }
    }

    private holdBack(webhookId: string, error: unknown): void {
        this.backoff.failed(webhookId, this.clock());
        this.report(error, "outcomes");
    }

    /** How long to sleep: until the next retry or lease end, a held webhook or a paused origin; at most POLL_MS. */
    private async untilNextDue(now: number): Promise<number> {
        let next = (await this.dependencies.shared.nextDueAfter(now)) ?? now + POLL_MS;
        for (const { until } of this.backoff.ends()) {
            if (until > now && until < next) {
                next = until;
            }
        }
        next = this.origins.nextPauseEnd(now, next);
        this.origins.forgetIdle();
        return Math.min(POLL_MS, Math.max(1, next - this.clock()));
    }

    /** Sleeps, then passes again; `poll`: and looks at the shared outbox for what fell due meanwhile. */
    private sleep(milliseconds: number, poll: boolean): void {
        clearTimeout(this.timer);
        if (!this.running) {
            return;
        }
        this.timer = setTimeout(() => {
            this.pausedUntil = 0;
            if (poll) {
                this.lookAgain();
            } else {
                this.wake();
            }
        }, milliseconds);
        this.timer.unref();
    }

    private report(error: unknown, part: StoragePart): void {
        reportFailure(error, part, this.dependencies.health, this.dependencies.onError);
    }
}
