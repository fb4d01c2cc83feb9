import { Delivery, Webhook } from "../contracts";
import { DeliveryStore, DuePosition } from "../store/delivery-store";
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

// Due rows read per query, and at most per pump: the bound on a pump's work when most due rows
// belong to targets at their cap.
const DUE_PAGE_SIZE = 100;
const MAX_SCAN_PER_PUMP = 2_000;

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
 */
export class DeliveryDispatcher {
    private readonly inFlight = new Map<string, Promise<void>>();
    private readonly perTarget = new Map<string, number>();
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
        this.wake();
    }

    /** Looks for due work on the next turn of the event loop; cheap to call often. */
    public wake(): void {
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

    public get busy(): number {
        return this.inFlight.size;
    }

    private pump(): void {
        if (!this.running) {
            return;
        }
        try {
            const now = this.clock();
            const free = this.options.concurrency - this.inFlight.size;
            if (free > 0) {
                this.startDue(now);
            }
            this.sleepUntilNextDue();
        } catch (error) {
            this.dependencies.onError(error);
            this.sleep(1000);
        }
    }

    /**
     * Starts due deliveries in queue order until every slot is taken. Rows of a webhook whose target
     * is at its cap are passed over, page after page, so one slow receiver's backlog does not hold
     * back the deliveries of others queued behind it.
     */
    private startDue(now: number): void {
        // One look-up per webhook and pump.
        const webhooks = new Map<string, Webhook | undefined>();
        const heldBack = new Set<string>();
        let after: DuePosition | undefined;
        for (let scanned = 0; scanned < MAX_SCAN_PER_PUMP; ) {
            const page = this.dependencies.outbox.due(now, DUE_PAGE_SIZE, after);
            for (const due of page) {
                if (this.inFlight.size >= this.options.concurrency) {
                    return;
                }
                if (this.inFlight.has(due.id) || heldBack.has(due.webhookId)) {
                    continue;
                }
                if (!webhooks.has(due.webhookId)) {
                    webhooks.set(due.webhookId, this.dependencies.findWebhook(due.webhookId));
                }
                const webhook = webhooks.get(due.webhookId);
                if (!webhook || !this.tryStart(due.id, webhook)) {
                    heldBack.add(due.webhookId);
                }
            }
            if (page.length < DUE_PAGE_SIZE) {
                return;
            }
            scanned += page.length;
            after = page[page.length - 1];
        }
    }

    /** Starts an attempt unless the webhook's target is at its cap; false when held back. */
    private tryStart(deliveryId: string, webhook: Webhook): boolean {
        const key = targetKey(webhook.target);
        const used = this.perTarget.get(key) ?? 0;
        if (used >= this.options.concurrencyPerTarget) {
            return false;
        }
        const delivery = this.dependencies.outbox.load(deliveryId);
        if (!delivery) {
            return true;
        }
        this.perTarget.set(key, used + 1);
        const attempt = this.attempt(delivery, webhook)
            .catch((error: unknown) => this.dependencies.onError(error))
            .finally(() => {
                this.inFlight.delete(delivery.id);
                const remaining = (this.perTarget.get(key) ?? 1) - 1;
                if (remaining > 0) {
                    this.perTarget.set(key, remaining);
                } else {
                    this.perTarget.delete(key);
                }
                this.wake();
            });
        this.inFlight.set(delivery.id, attempt);
        return true;
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
