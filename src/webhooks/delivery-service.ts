import { Attempt, Delivery } from "../contracts";
import { newDeliveryId } from "../store/delivery-id";
import { PING_EVENT } from "../events/catalogue";
import { deliveryBody } from "../events/serialize-payload";
import { DeliveryStore } from "../store/delivery-store";

/** The deliveries of a webhook as the API sees them: listed, shown, sent again, and pinged. */
export class DeliveryService {
    public constructor(
        private readonly outbox: DeliveryStore,
        /** Tells the dispatcher that a webhook has a delivery due now. */
        private readonly wake: (webhookId: string) => void,
    ) {}

    /** One page (1-based) of a webhook's deliveries, newest first. */
    public page(webhookId: string, page: number, limit: number): { deliveries: Delivery[]; totalCount: number } {
        return this.outbox.page(webhookId, (page - 1) * limit, limit);
    }

    public find(webhookId: string, deliveryId: string): Delivery | undefined {
        return this.outbox.find(webhookId, deliveryId);
    }

    public attempts(deliveryId: string): Attempt[] {
        return this.outbox.attempts(deliveryId);
    }

    /** Makes a delivery due now, whatever its state; undefined when it does not exist. */
    public redeliver(webhookId: string, deliveryId: string): Delivery | undefined {
        if (!this.outbox.redeliver(webhookId, deliveryId, Date.now())) {
            return undefined;
        }
        this.wake(webhookId);
        return this.outbox.find(webhookId, deliveryId);
    }

    /** Owes the webhook a `webhook.ping` delivery, due now. */
    public ping(webhookId: string): Delivery | undefined {
        const now = Date.now();
        const id = newDeliveryId();
        const body = deliveryBody(PING_EVENT, now, { webhookId });
        this.outbox.add({ id, webhookId, event: PING_EVENT, body, createdAt: now });
        this.wake(webhookId);
        return this.outbox.find(webhookId, id);
    }
}
