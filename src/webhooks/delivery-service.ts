import { Attempt, Delivery } from "../contracts";
import { newDeliveryId } from "../store/delivery-id";
import { PING_EVENT } from "../events/catalogue";
import { deliveryBody } from "../events/serialize-payload";
import { DeliveryStore } from "../store/delivery-store";
import { PingLimiter } from "./ping-limiter";

/** The deliveries every relay shares (storage.driver "postgres"), as the API reads and redelivers them. */
export interface SharedDeliveries {
    page(webhookId: string, offset: number, limit: number): Promise<{ deliveries: Delivery[]; totalCount: number }>;
    find(webhookId: string, id: string): Promise<Delivery | undefined>;
    attempts(deliveryId: string): Promise<Attempt[]>;
    /** Makes a delivery due again now and tells every relay; undefined when it does not exist. */
    redeliver(webhookId: string, id: string, now: number): Promise<Delivery | undefined>;
}

/**
 * The deliveries of a webhook as the API sees them: listed, shown, sent again, and pinged, in this
 * relay's file (storage.driver "sqlite"; SharedDeliveryService reads the outbox relays share).
 */
export class DeliveryService {
    public constructor(
        protected readonly outbox: DeliveryStore,
        /**
         * Tells the dispatcher that an operator made one of the webhook's deliveries due now: it
         * looks at the webhook, and a Retry-After pause of its origin ends.
         */
        protected readonly wake: (webhookId: string) => void,
        private readonly pings: PingLimiter,
    ) {}

    /** One page (1-based) of a webhook's deliveries, newest first. */
    public async page(
        webhookId: string,
        page: number,
        limit: number,
    ): Promise<{ deliveries: Delivery[]; totalCount: number }> {
        return this.outbox.page(webhookId, (page - 1) * limit, limit);
    }

    public async find(webhookId: string, deliveryId: string): Promise<Delivery | undefined> {
        return this.outbox.find(webhookId, deliveryId);
    }

    public async attempts(deliveryId: string): Promise<Attempt[]> {
        return this.outbox.attempts(deliveryId);
    }

    /** Makes a delivery due now, whatever its state; undefined when it does not exist. */
    public async redeliver(webhookId: string, deliveryId: string): Promise<Delivery | undefined> {
        const now = Date.now();
        if (!this.outbox.redeliver(webhookId, deliveryId, now)) {
            return undefined;
        }
        this.wake(webhookId);
        return this.outbox.find(webhookId, deliveryId);
    }

    /** Owes the webhook a `webhook.ping` delivery, due now; PingLimitError past limits.pingsPerMinute. */
    public ping(webhookId: string): Delivery {
        const now = Date.now();
        this.pings.take(webhookId, now);
        const id = newDeliveryId();
        const body = deliveryBody(PING_EVENT, now, { webhookId });
        this.outbox.add({ id, webhookId, event: PING_EVENT, body, createdAt: now });
        this.wake(webhookId);
        return {
            id,
            webhookId,
            event: PING_EVENT,
            body,
            status: "pending",
            attempts: 0,
            nextAttemptAt: now,
            reason: null,
            createdAt: now,
            updatedAt: now,
        };
    }
}

/**
 * The deliveries as the API sees them with several relays on one register (storage.driver
 * "postgres"): in the outbox they share. A ping is owed in this relay's file first, like an event,
 * and forwarded from there; until it is, it is found there.
 */
export class SharedDeliveryService extends DeliveryService {
    public constructor(
        outbox: DeliveryStore,
        wake: (webhookId: string) => void,
        pings: PingLimiter,
        private readonly shared: SharedDeliveries,
    ) {
        super(outbox, wake, pings);
    }

    public override page(
        webhookId: string,
        page: number,
        limit: number,
    ): Promise<{ deliveries: Delivery[]; totalCount: number }> {
        return this.shared.page(webhookId, (page - 1) * limit, limit);
    }

    public override async find(webhookId: string, deliveryId: string): Promise<Delivery | undefined> {
        return (await this.shared.find(webhookId, deliveryId)) ?? super.find(webhookId, deliveryId);
    }

    public override attempts(deliveryId: string): Promise<Attempt[]> {
        return this.shared.attempts(deliveryId);
    }

    public override async redeliver(webhookId: string, deliveryId: string): Promise<Delivery | undefined> {
        const again = await this.shared.redeliver(webhookId, deliveryId, Date.now());
        if (!again) {
            // Not forwarded yet: it is still in this relay's file.
            return super.redeliver(webhookId, deliveryId);
        }
        this.wake(webhookId);
        return again;
    }
}
