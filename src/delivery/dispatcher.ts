import { Delivery, Webhook } from "../contracts";
import { DeliveryStore } from "../store/delivery-store";
import { decideAfterAttempt, RetryDecision } from "./retry-policy";
import { DeliverySender, SendOutcome } from "./sender";
import { signDelivery } from "./signature";

export interface DeliveryReport {
    delivery: Delivery;
    webhook: Webhook;
    outcome: SendOutcome;
    decision: RetryDecision;
    durationMs: number;
}

export interface DispatcherOptions {
    concurrency: number;
    concurrencyPerTarget: number;
    retryScheduleSeconds: readonly number[];
    autoDisableAfterDeadDeliveries: number;
}

export interface DispatcherDependencies {
    outbox: DeliveryStore;
    sender: Pick<DeliverySender, "send">;
    findWebhook: (id: string) => Webhook | undefined;
    disableWebhook: (id: string, reason: string) => Promise<void>;
    onReport: (report: DeliveryReport) => void;
    onError: (error: unknown) => void;
    clock?: () => number;
    random?: () => number;
}

// Long sleeps are cut so that a changed wall clock cannot strand a due delivery.
const MAX_SLEEP_MS = 30_000;

const targetKey = (target: string): string => {
    try {
        return new URL(target).origin;
    } catch {
        return target;
    }
};

/**
 * Takes due deliveries from the outbox and sends them, within a global and a per-target cap. Each
 * outcome is written before the next decision, so a restart resumes exactly where it stopped.
 *
 * Work is found per webhook, not by walking one queue: the dispatcher knows which webhooks have
 * pending deliveries and visits them in turn, reading a webhook's due rows only when its target
 * has a free slot. A slow receiver's backlog costs nothing to pass over and never holds back the
 * deliveries of other webhooks.
 */
export class DeliveryDispatcher {
    private readonly inFlight = new Map<string, Promise<void>>();
    private readonly perTarget = new Map<string, number>();
    /** Webhooks that may have pending deliveries; a webhook leaves when it has none left. */
    private readonly active = new Set<string>();
    /** Webhooks whose pending deliveries are all retries due later: not visited before then. */
    private readonly notBefore = new Map<string, number>();
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
    }

    public start(): void {
        this.running = true;
        this.dependencies.outbox.pendingWebhookIds().forEach((id) => this.active.add(id));
        this.wake();
    }

    /**
     * Looks for due work on the next turn of the event loop; cheap to call often. `webhookIds` are
     * webhooks that were just given deliveries.
     */
    public wake(webhookIds: Iterable<string> = []): void {
        for (const id of webhookIds) {
            this.active.add(id);
            this.notBefore.delete(id);
        }
        if (!this.running || this.immediate) {
            return;
        }
        this.immediate = setImmediate(() => {
            this.immediate = undefined;
            this.pump();
        });
    }

    /** Stops taking work and waits for the attempts under way; their outcomes are recorded. */
    public async stop(): Promise<void> {
        this.running = false;
        clearTimeout(this.timer);
        if (this.immediate) {
            clearImmediate(this.immediate);
            this.immediate = undefined;
        }
        await Promise.allSettled([...this.inFlight.values()]);
    }

    private pump(): void {
        if (!this.running) {
            return;
        }
        try {
            this.startDue(this.clock());
            this.sleepUntilNextDue();
        } catch (error) {
            this.dependencies.onError(error);
            this.sleep(1000);
        }
    }

    /** Visits the webhooks with pending deliveries, from a rotating start, until every slot is taken. */
    private startDue(now: number): void {
        const webhookIds = [...this.active];
        const first = this.rotation++ % Math.max(1, webhookIds.length);
        for (let visited = 0; visited < webhookIds.length; visited++) {
            if (this.inFlight.size >= this.options.concurrency) {
                return;
            }
            const webhookId = webhookIds[(first + visited) % webhookIds.length];
            if ((this.notBefore.get(webhookId) ?? now) > now) {
                continue;
            }
            const webhook = this.dependencies.findWebhook(webhookId);
            if ((webhook ? this.fill(webhook, now) : "nothing due") === "nothing due") {
                this.restUntilNextDue(webhookId, now);
            }
        }
    }

    private restUntilNextDue(webhookId: string, now: number): void {
        const next = this.dependencies.outbox.nextDueOf(webhookId);
        if (next === null) {
            this.active.delete(webhookId);
            this.notBefore.delete(webhookId);
        } else if (next > now) {
            this.notBefore.set(webhookId, next);
        }
    }

    /** Starts as many of the webhook's due deliveries as its target and the global cap allow. */
    private fill(webhook: Webhook, now: number): "started" | "held back" | "nothing due" {
        const used = this.perTarget.get(targetKey(webhook.target)) ?? 0;
        const free = Math.min(this.options.concurrency - this.inFlight.size, this.options.concurrencyPerTarget - used);
        if (free <= 0) {
            return "held back";
        }
        let started = 0;
        // Its deliveries already in flight are among its first due rows: read past them.
        for (const due of this.dependencies.outbox.dueOf(webhook.id, now, free + used)) {
            if (started < free && !this.inFlight.has(due.id) && this.tryStart(due.id, webhook)) {
                started++;
            }
        }
        return started > 0 ? "started" : "nothing due";
    }

    private tryStart(deliveryId: string, webhook: Webhook): boolean {
        const key = targetKey(webhook.target);
        const used = this.perTarget.get(key) ?? 0;
        const delivery = this.dependencies.outbox.load(deliveryId);
        if (used >= this.options.concurrencyPerTarget || delivery?.status !== "pending") {
            return false;
        }
        this.perTarget.set(key, used + 1);
        const attempt = this.attempt(delivery, webhook)
            .catch((error: unknown) => this.dependencies.onError(error))
            .finally(() => {
                const wasFull = this.inFlight.size >= this.options.concurrency;
                this.inFlight.delete(delivery.id);
                const remaining = (this.perTarget.get(key) ?? 1) - 1;
                if (remaining > 0) {
                    this.perTarget.set(key, remaining);
                } else {
                    this.perTarget.delete(key);
                }
                this.afterAttempt(webhook.id, wasFull);
            });
        this.inFlight.set(delivery.id, attempt);
        return true;
    }

    /**
     * An attempt ended and freed a slot of its target: the same webhook's next due delivery takes
     * it, found by one indexed query. When it has none, or when every slot was taken (others may be
     * waiting for one), all webhooks with pending deliveries are visited again.
     */
    private afterAttempt(webhookId: string, wasFull: boolean): void {
        if (!this.running) {
            return;
        }
        try {
            const webhook = wasFull ? undefined : this.dependencies.findWebhook(webhookId);
            if (!webhook || this.fill(webhook, this.clock()) !== "started") {
                this.wake();
            }
        } catch (error) {
            this.dependencies.onError(error);
            this.wake();
        }
    }

    private async attempt(delivery: Delivery, webhook: Webhook): Promise<void> {
        const startedAt = this.clock();
        const headers = signDelivery(webhook.token, delivery.id, delivery.body, new Date(startedAt));
        const outcome = await this.dependencies.sender.send({
            target: webhook.target,
            body: delivery.body,
            headers: { ...headers },
        });
        const finishedAt = this.clock();
        const attemptNumber = delivery.attempts + 1;
        const decision = decideAfterAttempt(outcome.result, {
            attemptNumber,
            scheduleSeconds: this.options.retryScheduleSeconds,
            now: finishedAt,
            random: this.random(),
        });
        const durationMs = finishedAt - startedAt;
        this.dependencies.outbox.record({
            attempt: {
                deliveryId: delivery.id,
                number: attemptNumber,
                startedAt,
                durationMs,
                statusCode: outcome.result.kind === "response" ? outcome.result.statusCode : null,
                error: outcome.result.kind === "response" ? null : outcome.result.message,
                responseExcerpt: outcome.responseExcerpt,
            },
            status: decision.status,
            nextAttemptAt: decision.nextAttemptAt,
        });
        this.dependencies.onReport({
            delivery: { ...delivery, attempts: attemptNumber },
            webhook,
            outcome,
            decision,
            durationMs,
        });
        if (decision.disableWebhook) {
            await this.dependencies.disableWebhook(webhook.id, "the receiver answered 410 Gone");
        } else if (decision.status === "dead" && this.options.autoDisableAfterDeadDeliveries > 0) {
            const streak = this.dependencies.outbox.deadStreak(webhook.id, this.options.autoDisableAfterDeadDeliveries);
            if (streak >= this.options.autoDisableAfterDeadDeliveries) {
                await this.dependencies.disableWebhook(webhook.id, `${streak} deliveries in a row died`);
            }
        }
    }

    private sleepUntilNextDue(): void {
        const next = this.dependencies.outbox.nextDueAt();
        const wait = next === null ? MAX_SLEEP_MS : Math.max(0, next - this.clock());
        if (wait === 0 && this.inFlight.size > 0) {
            // Due work is held back by a cap; the attempt that frees a slot wakes the dispatcher.
            clearTimeout(this.timer);
            return;
        }
        this.sleep(wait === 0 ? 10 : wait);
    }

    private sleep(milliseconds: number): void {
        clearTimeout(this.timer);
        if (!this.running) {
            return;
        }
        this.timer = setTimeout(() => this.wake(), Math.min(milliseconds, MAX_SLEEP_MS));
        this.timer.unref();
    }
}
