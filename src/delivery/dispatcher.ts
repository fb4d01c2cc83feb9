import { Delivery, Webhook } from "../contracts";
import { DeliveryStore } from "../store/delivery-store";
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
import { JournalExpander } from "./journal-expander";
import { OutcomeBatch } from "./outcome-batch";
import { OriginLimits } from "./origin-limits";
import { AttemptResult } from "./retry-policy";
import { DeliverySender } from "./sender";

export type { DeliveryReport } from "./attempt";

export interface DispatcherOptions {
    concurrency: number;
    /** The most attempts under way to one origin; each origin's own limit adapts below it. */
    concurrencyPerTarget: number;
    concurrencyPerTargetFloor: number;
    retryScheduleSeconds: readonly number[];
    autoDisableAfterDeadDeliveries: number;
}

export type DispatcherOutbox = Pick<
    DeliveryStore,
    | "pendingWebhookIds"
    | "nextDueOf"
    | "dueOf"
    | "nextDueOfAfter"
    | "nextDueAfter"
    | "recordAll"
    | "cancelPending"
    | "deadStreak"
>;

export interface DispatcherDependencies {
    outbox: DispatcherOutbox;
    expander: Pick<JournalExpander, "expand">;
    sender: Pick<DeliverySender, "send">;
    /** An enabled webhook; undefined when it is disabled (its deliveries wait) or deleted. */
    findWebhook: (id: string) => Webhook | undefined;
    /** Disables a webhook; true when this call changed it (it was enabled). */
    disableWebhook: (id: string, reason: string) => Promise<boolean>;
    health: Pick<StorageHealth, "failed" | "succeeded">;
    onReport: (report: DeliveryReport) => void;
    /** Failures that are not the storage's; the caller throttles them. */
    onError: (error: unknown) => void;
    /**
     * Checkpoints the log before writing again after a failure: on a disk that was full, the space
     * freed must go to the checkpoint (which lets the log be reused) before the log grows into it.
     */
    makeRoom?: () => void;
    /** Retry-After pauses of origins, kept across a restart. */
    pauses?: OriginPauses;
    clock?: () => number;
    random?: () => number;
}

// Long sleeps are cut so that a changed wall clock cannot strand a due delivery.
const MAX_SLEEP_MS = 30_000;
// Due deliveries of a webhook read at once and launched from memory: one query for this many
// attempts, where reading past the ones in flight cost a query of some 65 rows an attempt.
const READ_AHEAD = 256;

const PUMP_BACKOFF_MAX_MS = 2_000;
// Outcomes written in one transaction at most (see outcome-batch.ts). An outcome waits at most
// RECORD_WAIT_MS: it is sent already, and waiting only delays what the API shows of it.
const RECORD_BATCH = 256;
const RECORD_WAIT_MS = 50;

/**
 * Takes due deliveries from the outbox and sends them, within a global and a per-target cap. An
 * attempt frees its slot once answered; its outcome is written with others in one transaction,
 * and until then its delivery is not read as due again. A restart resumes from what was written:
 * an answered attempt whose outcome was not yet written is sent again, with the same id.
 *
 * Work is found per webhook, not by walking one queue: the dispatcher knows which webhooks have
 * pending deliveries and visits them in turn, reading a webhook's due rows only when its target
 * has a free slot. A slow receiver's backlog costs nothing to pass over, and the next wake-up is
 * set by the next delivery due that is not held by a cap, so a hanging receiver never delays
 * another webhook's retries.
 *
 * No failure re-dispatches without time passing: a failed attempt (a throw, an outcome that
 * cannot be recorded) holds its webhook back with a growing delay, an outcome that cannot be
 * recorded is kept and nothing is sent until it is written, and a failed pass waits too.
 */
export class DeliveryDispatcher {
    /** Attempts from their start until their outcome is written (or fails to be). */
    private readonly inFlight = new Map<string, Promise<void>>();
    /** Attempts waiting for their answer: each holds a slot of the global cap. */
    private sending = 0;
    /** How many attempts each origin may have under way, adapted to how it answers. */
    public readonly origins: OriginLimits;
    /** Webhooks that may have pending deliveries; a webhook leaves when it has none left or is disabled. */
    private readonly active = new Set<string>();
    /** Webhooks whose pending deliveries are all retries due later: not visited before then. */
    private readonly resting = new Map<string, number>();
    /** Webhooks whose last attempts failed inside the plugin: held back, with a growing delay. */
    private readonly backoff = new WebhookBackoff();
    /** Outcomes sent but not yet written: nothing is sent until they are. */
    private readonly unrecorded = new Map<string, DeliveryReport["record"]>();
    /** Outcomes answered and not yet written, written together in one transaction. */
    private readonly outcomes: OutcomeBatch;
    /**
     * Each webhook's due deliveries read ahead, in due order, none in flight. Only this dispatcher
     * attempts them, so they stay due; a delivery made due by the API meanwhile is read with the
     * next batch, and a webhook disabled, deleted or gone drops its batch.
     */
    private readonly readAhead = new Map<string, { deliveries: Delivery[]; next: number }>();
    /**
     * Webhooks whose read-ahead held every delivery due when it was read, and the time until which
     * no other of their rows falls due (their next retry): while it holds, the deliveries the
     * journal gives them join the read-ahead from memory instead of being read back from the file.
     * Anything else that makes a delivery due (a redelivery, a ping, a webhook enabled again) wakes
     * the dispatcher with the webhook's id, which ends it.
     */
    private readonly allDueReadUntil = new Map<string, number>();
    /** Webhooks a receiver answered 410 in this run: deliveries they are given are cancelled. */
    private readonly gone = new Set<string>();
    /** Webhooks answered 410 whose disabling is under way: nothing more is sent to them meanwhile. */
    private readonly disabling = new Set<string>();
    private pumpFailures = 0;
    /**
     * An outcome could not be written lately: one attempt at a time until one is, so that a full
     * disk meets one outcome at a time, not an origin's worth of them.
     */
    private probing = false;
    private pausedUntil = 0;
    private rotation = 0;
    private timer: NodeJS.Timeout | undefined;
    private immediate: NodeJS.Immediate | undefined;
    private running = false;
    private readonly clock: () => number;
    private readonly random: () => number;

    public constructor(
        private readonly options: DispatcherOptions,
        private readonly dependencies: DispatcherDependencies,
    ) {
        this.clock = dependencies.clock ?? Date.now;
        this.random = dependencies.random ?? Math.random;
        this.origins = new OriginLimits(
            { floor: options.concurrencyPerTargetFloor, ceiling: options.concurrencyPerTarget },
            this.clock,
            dependencies.pauses,
        );
        this.outcomes = new OutcomeBatch((outcomes) => dependencies.outbox.recordAll(outcomes), {
            maxOutcomes: RECORD_BATCH,
            maxWaitMs: RECORD_WAIT_MS,
        });
    }

    public start(): void {
        this.running = true;
        this.dependencies.pauses
            ?.running(this.clock())
            .forEach(({ origin, until }) => this.origins.restorePause(origin, until));
        this.dependencies.outbox.pendingWebhookIds().forEach((id) => this.active.add(id));
        this.wake();
    }

    /**
     * Looks for due work on the next turn of the event loop; cheap to call often. `webhookIds` are
     * webhooks that were just given deliveries (or enabled again).
     */
    public wake(webhookIds: Iterable<string> = []): void {
        for (const id of webhookIds) {
            this.active.add(id);
            this.resting.delete(id);
            this.allDueReadUntil.delete(id);
        }
        if (!this.running || this.immediate || this.clock() < this.pausedUntil) {
            return;
        }
        this.immediate = setImmediate(() => {
            this.immediate = undefined;
            this.pump();
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

    /** Stops taking work and waits for the attempts under way; their outcomes are recorded. */
    public async stop(): Promise<void> {
        this.running = false;
        clearTimeout(this.timer);
        if (this.immediate) {
            clearImmediate(this.immediate);
            this.immediate = undefined;
        }
        this.outcomes.writeSoon();
        await Promise.allSettled([...this.inFlight.values()]);
        this.readAhead.clear();
        this.allDueReadUntil.clear();
        try {
            this.recordHeldOutcomes();
        } catch (error) {
            // Those deliveries stay pending in the file and are sent again at the next start.
            this.report(error, "outcomes");
        }
    }

    /** Attempts under way, and outcomes waiting to be written. */
    public get load(): { inFlight: number; unrecorded: number } {
        return { inFlight: this.sending, unrecorded: this.unrecorded.size };
    }

    private pump(): void {
        if (!this.running) {
            return;
        }
        let drained = true;
        try {
            if (this.pumpFailures > 0 || this.unrecorded.size > 0) {
                this.dependencies.makeRoom?.();
            }
            this.recordHeldOutcomes();
            const expansion = this.dependencies.expander.expand(EXPANSION_SLICE_MS);
            drained = expansion.drained;
            if (expansion.committed > 0) {
                this.dependencies.health.succeeded("deliveries");
            }
            this.enqueueExpanded(expansion.webhookIds, expansion.deliveries);
            const now = this.clock();
            this.startDue(now);
            if (drained) {
                this.sleepUntilNextDue(now);
            }
            this.pumpFailures = 0;
        } catch (error) {
            this.pumpFailures++;
            this.report(error, "deliveries");
            const wait = failureBackoffMs(this.pumpFailures, PUMP_BACKOFF_MAX_MS);
            this.pausedUntil = this.clock() + wait;
            this.sleep(wait);
            return;
        }
        if (!drained) {
            this.sleep(EXPANSION_REST_MS);
        }
    }

    private enqueueExpanded(webhookIds: readonly string[], deliveries: readonly Delivery[]): void {
        const now = this.clock();
        for (const id of webhookIds) {
            if (this.gone.has(id)) {
                this.dependencies.outbox.cancelPending(id, GONE_REASON, now);
                this.forgetQueue(id);
            } else {
                this.active.add(id);
                this.resting.delete(id);
            }
        }
        for (const delivery of deliveries) {
            const until = this.allDueReadUntil.get(delivery.webhookId);
            if (until === undefined || this.gone.has(delivery.webhookId)) {
                continue;
            }
            const batch = this.readAhead.get(delivery.webhookId);
            if (now >= until || (batch && batch.deliveries.length - batch.next >= READ_AHEAD)) {
                // A retry fell due, or the receiver lags: the file has the rest, in due order.
                this.allDueReadUntil.delete(delivery.webhookId);
                continue;
            }
            if (batch) {
                batch.deliveries.push(delivery);
            } else {
                this.readAhead.set(delivery.webhookId, { deliveries: [delivery], next: 0 });
            }
        }
    }

    private forgetQueue(webhookId: string): void {
        this.readAhead.delete(webhookId);
        this.allDueReadUntil.delete(webhookId);
    }

    /** Writes the outcomes that could not be written when they came; throws while the file refuses. */
    private recordHeldOutcomes(): void {
        if (this.unrecorded.size === 0) {
            return;
        }
        this.dependencies.outbox.recordAll([...this.unrecorded.values()]);
        this.unrecorded.clear();
        this.dependencies.health.succeeded("outcomes");
    }

    /** Visits the webhooks with pending deliveries, from a rotating start, until every slot is taken. */
    private startDue(now: number): void {
        const webhookIds = [...this.active];
        const first = this.rotation++ % Math.max(1, webhookIds.length);
        for (let visited = 0; visited < webhookIds.length; visited++) {
            if (this.sending >= this.options.concurrency) {
                return;
            }
            const webhookId = webhookIds[(first + visited) % webhookIds.length];
            if (this.heldUntil(webhookId) > now) {
                continue;
            }
            const webhook = this.dependencies.findWebhook(webhookId);
            if (!webhook) {
                // Disabled or deleted: its deliveries wait; enabling it wakes the dispatcher again.
                this.active.delete(webhookId);
                this.forgetQueue(webhookId);
                continue;
            }
            this.gone.delete(webhookId);
            if (this.fill(webhook, now) === "nothing due") {
                this.restUntilNextDue(webhookId, now);
            }
        }
    }

    private heldUntil(webhookId: string): number {
        return Math.max(this.resting.get(webhookId) ?? 0, this.backoff.until(webhookId));
    }

    private restUntilNextDue(webhookId: string, now: number): void {
        const next = this.dependencies.outbox.nextDueOf(webhookId);
        if (next === null) {
            this.active.delete(webhookId);
            this.resting.delete(webhookId);
        } else if (next > now) {
            this.resting.set(webhookId, next);
        }
    }

    /** Starts as many of the webhook's due deliveries as its target and the global cap allow. */
    private fill(webhook: Webhook, now: number): "started" | "held back" | "nothing due" {
        if (this.disabling.has(webhook.id)) {
            return "held back";
        }
        const key = targetKey(webhook.target);
        const used = this.origins.inFlight(key);
        const cap = this.probing ? 1 : this.options.concurrency;
        const free = Math.min(cap - this.sending, this.origins.free(key));
        if (free <= 0) {
            return "held back";
        }
        let batch = this.readAhead.get(webhook.id);
        const until = this.allDueReadUntil.get(webhook.id);
        if (until !== undefined && now >= until) {
            this.allDueReadUntil.delete(webhook.id);
        }
        if (!batch && this.allDueReadUntil.has(webhook.id)) {
            return "nothing due";
        }
        if (!batch) {
            // Its deliveries in flight or answered and not yet written are among its first due rows:
            // read past them.
            const limit = READ_AHEAD + used + this.outcomes.waiting(webhook.id);
            const due = this.dependencies.outbox.dueOf(webhook.id, now, limit);
            batch = { deliveries: due.filter((delivery) => !this.inFlight.has(delivery.id)), next: 0 };
            this.readAhead.set(webhook.id, batch);
            if (due.length < limit) {
                this.allDueReadUntil.set(
                    webhook.id,
                    this.dependencies.outbox.nextDueOfAfter(webhook.id, now) ?? Infinity,
                );
            } else {
                this.allDueReadUntil.delete(webhook.id);
            }
        }
        let started = 0;
        while (started < free && batch.next < batch.deliveries.length) {
            this.launch(batch.deliveries[batch.next++], webhook, key);
            started++;
        }
        if (batch.next >= batch.deliveries.length) {
            this.readAhead.delete(webhook.id);
        }
        return started > 0 ? "started" : "nothing due";
    }

    private launch(delivery: Delivery, webhook: Webhook, key: string): void {
        this.origins.started(key);
        this.sending++;
        let slotHeld = true;
        const freeSlot = (answer?: { result: AttemptResult; durationMs: number }): void => {
            if (!slotHeld) {
                return;
            }
            slotHeld = false;
            const wasFull = this.sending >= this.options.concurrency;
            this.sending--;
            this.origins.finished(key, answer?.result, answer?.durationMs ?? 0);
            this.afterAttempt(webhook.id, wasFull);
        };
        const attempt = this.run(delivery, webhook, freeSlot)
            .then(
                () => {
                    this.backoff.succeeded(webhook.id);
                },
                (error: unknown) => this.holdBack(webhook.id, error),
            )
            .finally(() => {
                this.inFlight.delete(delivery.id);
                freeSlot();
            });
        this.inFlight.set(delivery.id, attempt);
    }

    private holdBack(webhookId: string, error: unknown): void {
        // The attempt left its delivery pending and due, in the file only: it is read from there.
        this.allDueReadUntil.delete(webhookId);
        this.backoff.failed(webhookId, this.clock());
        this.report(error, "outcomes");
    }

    /**
     * An attempt ended and freed a slot of its target: the same webhook's next due delivery takes
     * it, found by one indexed query. When it has none, when it is held back, or when every slot
     * was taken (others may be waiting for one), all webhooks with pending deliveries are visited.
     */
    private afterAttempt(webhookId: string, wasFull: boolean): void {
        if (!this.running) {
            return;
        }
        try {
            const now = this.clock();
            const mayRefill = !wasFull && this.unrecorded.size === 0 && this.heldUntil(webhookId) <= now;
            const webhook = mayRefill ? this.dependencies.findWebhook(webhookId) : undefined;
            if (!webhook || this.fill(webhook, now) !== "started") {
                this.wake();
            }
        } catch (error) {
            this.report(error, "deliveries");
            this.wake();
        }
    }

    private async run(
        delivery: Delivery,
        webhook: Webhook,
        freeSlot: (answer: { result: AttemptResult; durationMs: number }) => void,
    ): Promise<void> {
        const report = await attemptDelivery(delivery, webhook, {
            sender: this.dependencies.sender,
            retryScheduleSeconds: this.options.retryScheduleSeconds,
            clock: this.clock,
            random: this.random,
        });
        const written = this.outcomes.add(webhook.id, report.record);
        if (report.decision.disableWebhook) {
            this.disabling.add(webhook.id);
        }
        // After a write failed, the slot is held until the outcome is written: a disk that was
        // full meets one outcome at a time, not an origin's worth of them. After a 410, until the
        // webhook is disabled.
        const holdSlot = this.probing || report.decision.disableWebhook;
        if (!holdSlot) {
            freeSlot({ result: report.outcome.result, durationMs: report.durationMs });
        }
        if (holdSlot || this.sending === 0 || !this.running) {
            // Nothing else is under way whose outcome could join these soon.
            this.outcomes.writeSoon();
        }
        try {
            await written;
        } catch (error) {
            // Sent but not written: kept, and nothing more is sent until it is (see recordHeldOutcomes).
            this.unrecorded.set(delivery.id, report.record);
            this.probing = true;
            this.disabling.delete(webhook.id);
            throw error;
        }
        if (this.unrecorded.size === 0) {
            this.probing = false;
            this.dependencies.health.succeeded("outcomes");
        }
        if (report.record.status === "pending") {
            // A retry is in the file only now: the reads made while it waited did not see it.
            this.allDueReadUntil.delete(webhook.id);
            this.wake();
        }
        this.dependencies.onReport(report);
        await this.afterDecision(report);
    }

    private async afterDecision({ webhook, decision }: DeliveryReport): Promise<void> {
        if (decision.disableWebhook) {
            try {
                await this.dependencies.disableWebhook(webhook.id, GONE_REASON);
                this.gone.add(webhook.id);
                this.dependencies.outbox.cancelPending(webhook.id, GONE_REASON, this.clock());
                this.forgetQueue(webhook.id);
            } finally {
                this.disabling.delete(webhook.id);
            }
        } else if (decision.status === "dead" && this.options.autoDisableAfterDeadDeliveries > 0) {
            const streak = this.dependencies.outbox.deadStreak(webhook.id, this.options.autoDisableAfterDeadDeliveries);
            if (streak >= this.options.autoDisableAfterDeadDeliveries) {
                await this.dependencies.disableWebhook(webhook.id, `${streak} deliveries in a row died`);
            }
        }
    }

    private report(error: unknown, part: StoragePart): void {
        reportFailure(error, part, this.dependencies.health, this.dependencies.onError);
    }

    /**
     * Sleeps until the next delivery falls due that no cap holds back: those wake it when a slot
     * frees. `now` is the time the pass looked for due work: what fell due after it was not looked
     * at, so the wake-up is reckoned from it, not from the clock after the pass (that missed a
     * retry due in between, and slept 30 s).
     */
    private sleepUntilNextDue(now: number): void {
        let next = this.dependencies.outbox.nextDueAfter(now) ?? now + MAX_SLEEP_MS;
        for (const webhookId of this.active) {
            const held = this.heldUntil(webhookId);
            if (held > now && held < next) {
                next = held;
            }
        }
        // An origin paused by a Retry-After holds deliveries already due: its pause's end wakes them.
        next = this.origins.nextPauseEnd(now, next);
        this.origins.forgetIdle();
        this.sleep(Math.max(1, next - this.clock()));
    }

    private sleep(milliseconds: number): void {
        clearTimeout(this.timer);
        if (!this.running) {
            return;
        }
        this.timer = setTimeout(
            () => {
                this.pausedUntil = 0;
                this.wake();
            },
            Math.min(milliseconds, MAX_SLEEP_MS),
        );
        this.timer.unref();
    }
}
