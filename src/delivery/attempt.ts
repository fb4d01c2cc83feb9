import { Delivery, Webhook } from "../contracts";
import { AttemptOutcome } from "../store/delivery-store";
import { decideAfterAttempt, RetryDecision } from "./retry-policy";
import { DeliverySender, SendOutcome } from "./sender";
import { signDelivery } from "./signature";

export interface DeliveryReport {
    delivery: Delivery;
    webhook: Webhook;
    outcome: SendOutcome;
    decision: RetryDecision;
    durationMs: number;
    /** What the outbox records of it. */
    record: AttemptOutcome;
}

export interface AttemptContext {
    sender: Pick<DeliverySender, "send">;
    retryScheduleSeconds: readonly number[];
    clock: () => number;
    random: () => number;
}

/** One attempt: signs, posts, and decides what comes next. Writes nothing. */
export const attemptDelivery = async (
    delivery: Delivery,
    webhook: Webhook,
    context: AttemptContext,
): Promise<DeliveryReport> => {
    const startedAt = context.clock();
    const headers = signDelivery(webhook.token, delivery.id, delivery.body, new Date(startedAt));
    const outcome = await context.sender.send({ target: webhook.target, body: delivery.body, headers: { ...headers } });
    const finishedAt = context.clock();
    const attemptNumber = delivery.attempts + 1;
    const decision = decideAfterAttempt(outcome.result, {
        attemptNumber,
        scheduleSeconds: context.retryScheduleSeconds,
        now: finishedAt,
        random: context.random(),
    });
    const durationMs = finishedAt - startedAt;
    return {
        delivery: { ...delivery, attempts: attemptNumber },
        webhook,
        outcome,
        decision,
        durationMs,
        record: {
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
        },
    };
};
