import { publicWebhook } from "../contracts";
import { WEBHOOK_EVENTS } from "../events/catalogue";
import { DeliveryReport } from "./attempt";

/** Tells the kernel of each attempt, as ARK's plugin does: `webhooks.broadcasted` or `webhooks.failed`. */
export const announceAttempt = (
    { webhook, decision, outcome, durationMs, delivery }: DeliveryReport,
    dispatchEvent: (name: string, data: unknown) => void,
): void => {
    const data = {
        executionTime: durationMs,
        webhook: publicWebhook(webhook),
        deliveryId: delivery.id,
        attempt: delivery.attempts,
        status: decision.status,
        statusCode: outcome.result.kind === "response" ? outcome.result.statusCode : null,
    };
    if (decision.status === "delivered") {
        dispatchEvent(WEBHOOK_EVENTS.broadcasted, data);
    } else {
        const error = outcome.result.kind === "response" ? `HTTP ${outcome.result.statusCode}` : outcome.result.message;
        dispatchEvent(WEBHOOK_EVENTS.failed, { ...data, error });
    }
};
