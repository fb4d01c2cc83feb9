import Boom from "@hapi/boom";
import Hapi from "@hapi/hapi";

import { Attempt, Delivery } from "../../contracts";
import { newDeliveryId } from "../../delivery/delivery-id";
import { PING_EVENT } from "../../events/catalogue";
import { DeliveryStore } from "../../store/delivery-store";
import { WebhookRegister } from "../../webhooks/webhook-register";
import { pageMeta } from "../pagination";
import { notFoundWebhook } from "./webhooks-controller";

const presentDelivery = (delivery: Delivery) => ({
    id: delivery.id,
    webhookId: delivery.webhookId,
    event: delivery.event,
    status: delivery.status,
    attempts: delivery.attempts,
    nextAttemptAt: delivery.nextAttemptAt,
    createdAt: delivery.createdAt,
    updatedAt: delivery.updatedAt,
});

const presentAttempt = (attempt: Attempt) => ({
    number: attempt.number,
    startedAt: attempt.startedAt,
    durationMs: attempt.durationMs,
    statusCode: attempt.statusCode,
    error: attempt.error,
    responseExcerpt: attempt.responseExcerpt,
});

export class DeliveriesController {
    public constructor(
        private readonly register: WebhookRegister,
        private readonly outbox: DeliveryStore,
        private readonly wakeDispatcher: (webhookId: string) => void,
        private readonly prefix: string,
        private readonly clock: () => number = Date.now,
    ) {}

    public index(request: Hapi.Request) {
        const webhookId = this.existingWebhookId(request);
        const { page, limit } = request.query as { page: number; limit: number };
        const { deliveries, totalCount } = this.outbox.page(webhookId, (page - 1) * limit, limit);
        const path = `${this.prefix}/webhooks/${encodeURIComponent(webhookId)}/deliveries`;
        return {
            meta: pageMeta({ path, page, limit }, deliveries.length, totalCount),
            data: deliveries.map(presentDelivery),
        };
    }

    public show(request: Hapi.Request) {
        const delivery = this.existingDelivery(request);
        return {
            data: {
                ...presentDelivery(delivery),
                body: JSON.parse(delivery.body) as unknown,
                attempts: this.outbox.attempts(delivery.id).map(presentAttempt),
            },
        };
    }

    public redeliver(request: Hapi.Request, h: Hapi.ResponseToolkit) {
        const delivery = this.existingDelivery(request);
        this.outbox.redeliver(delivery.webhookId, delivery.id, this.clock());
        this.wakeDispatcher(delivery.webhookId);
        return h.response({ data: presentDelivery(this.existingDelivery(request)) }).code(202);
    }

    public ping(request: Hapi.Request, h: Hapi.ResponseToolkit) {
        const webhookId = this.existingWebhookId(request);
        const now = this.clock();
        const id = newDeliveryId();
        const body = JSON.stringify({ timestamp: now, event: PING_EVENT, data: { webhookId } });
        this.outbox.journal({ event: PING_EVENT, body, createdAt: now, deliveries: [{ id, webhookId }] });
        this.wakeDispatcher(webhookId);
        const delivery = this.outbox.find(webhookId, id);
        return h.response({ data: delivery ? presentDelivery(delivery) : { id } }).code(202);
    }

    private existingWebhookId(request: Hapi.Request): string {
        const webhook = this.register.find(request.params.id);
        if (!webhook) {
            throw notFoundWebhook(request.params.id);
        }
        return webhook.id;
    }

    private existingDelivery(request: Hapi.Request): Delivery {
        const webhookId = this.existingWebhookId(request);
        const delivery = this.outbox.find(webhookId, request.params.deliveryId);
        if (!delivery) {
            throw Boom.notFound(`delivery ${request.params.deliveryId} of webhook ${webhookId} was not found`);
        }
        return delivery;
    }
}
