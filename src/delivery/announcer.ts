import { publicWebhook, Webhook } from "../contracts";
import { WEBHOOK_EVENTS } from "../events/catalogue";
import { DeliveryReport } from "./attempt";

export type PublicWebhook = ReturnType<typeof publicWebhook>;

/** What a kernel event says of one attempt, besides the webhook. */
export interface AttemptFacts {
    executionTime: number;
    deliveryId: string;
    attempt: number;
    status: string;
    statusCode: number | null;
    /** Only in `webhooks.failed`. */
    error?: string;
}

/** One attempt to tell the kernel of, with the engine's own webhook (its public form is made where it is sent). */
export interface AttemptAnnouncement {
    name: string;
    webhook: Webhook;
    facts: AttemptFacts;
}

/** Tells of each attempt as ARK's plugin does: `webhooks.broadcasted`, or `webhooks.failed` with the error. */
export const announcementOf = ({
    webhook,
    decision,
    outcome,
    durationMs,
    delivery,
}: DeliveryReport): AttemptAnnouncement => {
    const facts: AttemptFacts = {
        executionTime: durationMs,
        deliveryId: delivery.id,
        attempt: delivery.attempts,
        status: decision.status,
        statusCode: outcome.result.kind === "response" ? outcome.result.statusCode : null,
    };
    if (decision.status === "delivered") {
        return { name: WEBHOOK_EVENTS.broadcasted, webhook, facts };
    }
    const error = outcome.result.kind === "response" ? `HTTP ${outcome.result.statusCode}` : outcome.result.message;
    return { name: WEBHOOK_EVENTS.failed, webhook, facts: { ...facts, error } };
};

/** The kernel event's data, its keys in the order ARK's plugin gives them. */
export const kernelEventData = (facts: AttemptFacts, webhook: PublicWebhook): Record<string, unknown> => {
    const { executionTime, deliveryId, attempt, status, statusCode, error } = facts;
    const data: Record<string, unknown> = { executionTime, webhook, deliveryId, attempt, status, statusCode };
    if (error !== undefined) {
        data.error = error;
    }
    return data;
};
