import { Delivery, Webhook } from "../contracts";
import { OriginPauses } from "../store/origin-pauses";
import { Outbox } from "../store/outbox";
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
import { OriginLimits } from "./origin-limits";
import { OutcomeBatch } from "./outcome-batch";
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

export interface DispatcherDependencies {
    /** The storage driver: this relay's file, or the outbox every relay shares. */
    outbox: Outbox;
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
    /** Retry-After pauses of origins, kept across a restart. */
    pauses?: OriginPauses;
    clock?: () => number;
    random?: () => number;
}

// Long sleeps are cut so that a changed wall clock cannot strand a due delivery.
const MAX_SLEEP_MS = 30_000;
const PASS_BACKOFF_MAX_MS = 2_000;
// Outcomes written together at most (see outcome-batch.ts). An outcome waits at most
// RECORD_WAIT_MS: it is sent already, and waiting only delays what the API shows of it.
const RECORD_BATCH = 256;
const RECORD_WAIT_MS = 50;

type Answer = { result: AttemptResult; durationMs: number };

/**
 * The delivery loop, over either storage driver (see outbox.ts). Each pass turns the journal into
 * deliveries, has the outbox take them in, and claims due deliveries webhook by webhook, from a
 * rotating start, within a global cap and each origin's adaptive limit (origin-limits.ts). An
 * attempt frees its slot once answered, and its webhook is visited again in the next pass; its
 * outcome is written with others, and its claim ends then.
 *
 * Work is found per webhook, not by walking one queue: a slow receiver's backlog costs nothing to
 * pass over, and the next wake-up is set by the next delivery due that no cap holds back, so a
 * hanging receiver never delays another webhook's retries.
 *
 * No failure re-dispatches without time passing: a failed attempt (a throw, an outcome that
 * cannot be recorded) holds its webhook back with a growing delay, an outcome that cannot be
 * recorded is kept and nothing more is sent until it is written, and a failed pass waits too,
 * however often events wake the dispatcher meanwhile.
 */
export class DeliveryDispatcher {
    /** How many attempts each origin may have under way, adapted to how it answers. */
    public readonly origins: OriginLimits;
    /** Attempts from their start until their outcome is written (or fails to be). */
    private readonly inFlight = new Map<string, Promise<void>>();
    /** Attempts waiting for their answer: each holds a slot of the global cap. */
    private sending = 0;
    /** Webhooks that may have due deliveries; a webhook leaves when it has none or is disabled. */
    private readonly active = new Set<string>();
    /** Webhooks whose pending deliveries are all due later: not visited before then. */
    private readonly resting = new Map<string, number>();
    /**
     * The soonest retry this dispatcher wrote for each webhook: visited when it falls due, whatever
     * the outbox said of the webhook when it was last claimed from.
     */
    private readonly retries = new Map<string, number>();
    /** Webhooks whose last attempts failed inside the plugin: held back, with a growing delay. */
    private readonly backoff = new WebhookBackoff();
    /** Outcomes sent but not written: nothing more is sent until they are. */
    private readonly unrecorded = new Map<string, DeliveryReport["record"]>();
    private readonly outcomes: OutcomeBatch;
    /** Webhooks a receiver answered 410 in this run: deliveries they are given are cancelled. */
    private readonly gone = new Set<string>();
    /** Webhooks answered 410 whose disabling is under way: nothing more is sent to them meanwhile. */
    private readonly disabling = new Set<string>();
    /**
     * An outcome could not be written lately: one attempt at a time until one is, so that a full
     * disk (or a database out of reach) meets one outcome at a time, not an origin's worth.
     */
    private probing = false;
    /** The next pass asks the outbox which webhooks have due work. */
    private lookPending = true;
    /** The pass under way: stop() waits for it, so that nothing touches storage after it closes. */
    private pass: Promise<void> = Promise.resolve();
    private passing = false;
    private passAgain = false;
    private passFailures = 0;
    /** After a failed pass, wakes wait for its backoff: events arriving meanwhile must not each try again. */
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
        this.lookPending = true;
        this.schedulePass();
    }

    /**
     * Passes again soon; cheap to call often. `webhookIds` were made due by something other than
     * the journal (a redelivery, a ping, a webhook enabled again).
     */
    public wake(webhookIds: Iterable<string> = []): void {
        for (const id of webhookIds) {
            this.dependencies.outbox.touched(id);
            this.visit(id);
        }
        this.schedulePass();
    }

    /** Another writer made deliveries due (a notice), or some may have been missed: the next pass looks. */
    public lookAgain(): void {
        this.lookPending = true;
        this.schedulePass();
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
        await this.pass;
        await this.dependencies.outbox.letGo(this.clock()).catch((error: unknown) => this.report(error, "deliveries"));
        await Promise.allSettled([...this.inFlight.values()]);
        // Outcomes not written are attempted again at the next start (or, shared, when their lease runs out), under the same id.
        await this.recordHeldOutcomes().catch((error: unknown) => this.report(error, "outcomes"));
    }

    /** Attempts under way, and outcomes waiting to be written. */
    public get load(): { inFlight: number; unrecorded: number } {
        return { inFlight: this.sending, unrecorded: this.unrecorded.size };
    }

    private visit(webhookId: string): void {
        this.active.add(webhookId);
        this.resting.delete(webhookId);
    }

    private schedulePass(): void {
        if (!this.running || this.clock() < this.pausedUntil) {
            return;
        }
        if (this.passing) {
            this.passAgain = true;
            return;
        }
        this.immediate ??= setImmediate(() => {
            this.immediate = undefined;
            this.pass = this.runPass();
        });
    }

    private async runPass(): Promise<void> {
        if (!this.running || this.passing) {
            return;
        }
        this.passing = true;
        this.passAgain = false;
        clearTimeout(this.timer);
        let rest: { ms: number; look: boolean };
        try {
            const { outbox, expander, health } = this.dependencies;
            if (this.passFailures > 0 || this.unrecorded.size > 0) {
                outbox.makeRoom();
            }
            await this.recordHeldOutcomes();
            const expansion = expander.expand(EXPANSION_SLICE_MS);
            if (expansion.committed > 0) {
                health.succeeded("deliveries");
            }
            const intake = await outbox.takeIn(expansion, this.clock());
            await this.takeInWebhooks(intake.webhookIds);
            const now = this.clock();
            this.visitRetriesDue(now);
            if (this.lookPending) {
                this.lookPending = false;
                (await outbox.webhooksWithWork(now)).forEach((id) => this.visit(id));
            }
            await this.startDue(now);
            rest =
                expansion.drained && intake.done
                    ? await this.restAfter(now, expansion.gatherMs)
                    : { ms: EXPANSION_REST_MS, look: false };
            this.passFailures = 0;
        } catch (error) {
            this.passFailures++;
            // A notice may have been missed meanwhile; an outbox told of all its work lost nothing
            // (and its look reads every pending row's webhook).
            this.lookPending ||= this.dependencies.outbox.lookEveryMs !== undefined;
            this.report(error, "deliveries");
            rest = { ms: failureBackoffMs(this.passFailures, PASS_BACKOFF_MAX_MS), look: false };
            this.pausedUntil = this.clock() + rest.ms;
        } finally {
            this.passing = false;
        }
        if (this.passAgain && this.passFailures === 0) {
            this.schedulePass();
            return;
        }
        this.sleep(rest);
        if (this.sending === 0) {
            // Nothing under way: the outcomes waiting are all there will be for now.
            this.outcomes.writeSoon();
        }
    }

    private visitRetriesDue(now: number): void {
        for (const [webhookId, at] of this.retries) {
            if (at <= now) {
                this.retries.delete(webhookId);
                this.visit(webhookId);
            }
        }
    }

    /** Webhooks the journal just gave deliveries: visited, unless a receiver said it is gone. */
    private async takeInWebhooks(webhookIds: readonly string[]): Promise<void> {
        for (const id of webhookIds) {
            if (this.gone.has(id)) {
                await this.dependencies.outbox.cancelPending(id, GONE_REASON, this.clock());
            } else {
                this.visit(id);
            }
        }
    }

    /** Writes the outcomes that could not be written when they came; throws while storage refuses. */
    private async recordHeldOutcomes(): Promise<void> {
        if (this.unrecorded.size === 0) {
            return;
        }
        await this.dependencies.outbox.recordAll([...this.unrecorded.values()]);
        this.unrecorded.clear();
        this.probing = false;
        this.dependencies.health.succeeded("outcomes");
    }

    /** Visits the webhooks with due deliveries, from a rotating start, until every slot is taken. */
    private async startDue(now: number): Promise<void> {
        const webhookIds = [...this.active];
        const first = this.rotation++ % Math.max(1, webhookIds.length);
        for (let visited = 0; visited < webhookIds.length && this.running; visited++) {
            const cap = this.probing ? 1 : this.options.concurrency;
            if (this.sending >= cap || this.unrecorded.size > 0) {
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
                this.dependencies.outbox.forget(webhookId);
                continue;
            }
            this.gone.delete(webhookId);
            await this.fill(webhook, now, cap);
        }
    }

    private heldUntil(webhookId: string): number {
        return Math.max(this.resting.get(webhookId) ?? 0, this.backoff.until(webhookId));
    }

    /** Starts as many of the webhook's due deliveries as its origin and the global cap allow. */
    private async fill(webhook: Webhook, now: number, cap: number): Promise<void> {
        if (this.disabling.has(webhook.id)) {
            return;
        }
        const key = targetKey(webhook.target);
        const free = Math.min(cap - this.sending, this.origins.free(key));
        if (free <= 0) {
            return;
        }
        // Only a pass launches attempts, one pass at a time: the slots counted are still free after the claim.
        const claim = await this.dependencies.outbox.claim(webhook.id, now, free);
        claim.deliveries.forEach((delivery) => this.launch(delivery, webhook, key));
        if (claim.idleUntil === Infinity) {
            this.active.delete(webhook.id);
            this.resting.delete(webhook.id);
        } else if (claim.idleUntil !== undefined && claim.idleUntil > now) {
            this.resting.set(webhook.id, claim.idleUntil);
        }
    }

    private launch(delivery: Delivery, webhook: Webhook, key: string): void {
        this.origins.started(key);
        this.sending++;
        let slotHeld = true;
        const freeSlot = (answer?: Answer): void => {
            if (!slotHeld) {
                return;
            }
            slotHeld = false;
            this.sending--;
            this.origins.finished(key, answer?.result, answer?.durationMs ?? 0);
            // Its next deliveries may be due, and the slot may be another webhook's.
            this.visit(webhook.id);
            this.schedulePass();
        };
        const attempt = this.attempt(delivery, webhook, freeSlot)
            .then(
                () => this.backoff.succeeded(webhook.id),
                (error: unknown) => this.holdBack(delivery, error),
            )
            .finally(() => {
                this.inFlight.delete(delivery.id);
                freeSlot();
            });
        this.inFlight.set(delivery.id, attempt);
    }

    private holdBack(delivery: Delivery, error: unknown): void {
        if (!this.unrecorded.has(delivery.id)) {
            // Ended without an outcome to write: the delivery is due again.
            this.dependencies.outbox
                .release([delivery.id], this.clock())
                .catch((failure: unknown) => this.report(failure, "deliveries"));
        }
        this.backoff.failed(delivery.webhookId, this.clock());
        this.report(error, "outcomes");
    }

    private async attempt(delivery: Delivery, webhook: Webhook, freeSlot: (answer: Answer) => void): Promise<void> {
        const report = await attemptDelivery(delivery, webhook, {
            sender: this.dependencies.sender,
            retryScheduleSeconds: this.options.retryScheduleSeconds,
            clock: this.clock,
            random: this.random,
        });
        const written = this.outcomes.add(report.record);
        if (report.decision.disableWebhook) {
            this.disabling.add(webhook.id);
        }
        // After a write failed, the slot is held until the outcome is written: storage that
        // refused meets one outcome at a time. After a 410, until the webhook is disabled.
        const holdSlot = this.probing || report.decision.disableWebhook;
        if (!holdSlot) {
            freeSlot({ result: report.outcome.result, durationMs: report.durationMs });
        }
        if (holdSlot || !this.running || (this.sending === 0 && !this.passing && !this.immediate)) {
            // Nothing else is under way or about to start whose outcome could join these soon.
            this.outcomes.writeSoon();
        }
        try {
            await written;
        } catch (error) {
            this.unrecorded.set(delivery.id, report.record);
            this.probing = true;
            this.disabling.delete(webhook.id);
            throw error;
        }
        if (this.unrecorded.size === 0) {
            this.probing = false;
            this.dependencies.health.succeeded("outcomes");
        }
        const retryAt = report.record.nextAttemptAt;
        if (report.record.status === "pending" && retryAt !== null) {
            // Its retry is written: the next wake-up counts it.
            this.retries.set(webhook.id, Math.min(retryAt, this.retries.get(webhook.id) ?? Infinity));
            this.schedulePass();
        }
        this.dependencies.onReport(report);
        await this.afterDecision(report);
    }

    private async afterDecision({ webhook, decision }: DeliveryReport): Promise<void> {
        const { outbox } = this.dependencies;
        if (decision.disableWebhook) {
            try {
                await this.dependencies.disableWebhook(webhook.id, GONE_REASON);
                this.gone.add(webhook.id);
                await outbox.cancelPending(webhook.id, GONE_REASON, this.clock());
                outbox.forget(webhook.id);
                this.active.delete(webhook.id);
            } finally {
                this.disabling.delete(webhook.id);
            }
        } else if (decision.status === "dead" && this.options.autoDisableAfterDeadDeliveries > 0) {
            const window = this.options.autoDisableAfterDeadDeliveries;
            const streak = await outbox.deadStreak(webhook.id, window);
            if (streak >= window) {
                await this.dependencies.disableWebhook(webhook.id, `${streak} deliveries in a row died`);
            }
        }
    }

    /**
     * How long to sleep after a pass that left nothing to take in: until the next delivery falls
     * due that no cap holds back (those wake it when a slot frees), a held webhook or a paused
     * origin. `now` is the time the pass looked for due work: what fell due after it was not looked
     * at, so the wake-up is reckoned from it.
     */
    private async restAfter(now: number, gatherMs: number): Promise<{ ms: number; look: boolean }> {
        const every = this.dependencies.outbox.lookEveryMs;
        const longest = every ?? MAX_SLEEP_MS;
        // Attempts under way wake the next pass as they end: an outbox others write to is asked
        // only when idle, and looked at every `lookEveryMs` meanwhile.
        const busy = every !== undefined && this.sending > 0;
        let next = (busy ? null : await this.dependencies.outbox.nextDueAfter(now)) ?? now + longest;
        for (const webhookId of this.active) {
            const held = this.heldUntil(webhookId);
            if (held > now && held < next) {
                next = held;
            }
        }
        for (const at of this.retries.values()) {
            next = Math.min(next, Math.max(at, now + 1));
        }
        if (gatherMs > 0) {
            // Journal entries wait to be moved together: not longer.
            next = Math.min(next, now + Math.ceil(gatherMs));
        }
        // An origin paused by a Retry-After holds deliveries already due: its pause's end wakes them.
        next = this.origins.nextPauseEnd(now, next);
        this.origins.forgetIdle();
        return { ms: Math.min(longest, Math.max(1, next - this.clock())), look: every !== undefined };
    }

    private sleep({ ms, look }: { ms: number; look: boolean }): void {
        clearTimeout(this.timer);
        if (!this.running) {
            return;
        }
        this.timer = setTimeout(() => {
            this.pausedUntil = 0;
            this.lookPending ||= look;
            this.schedulePass();
        }, ms);
        this.timer.unref();
    }

    private report(error: unknown, part: StoragePart): void {
        reportFailure(error, part, this.dependencies.health, this.dependencies.onError);
    }
}
