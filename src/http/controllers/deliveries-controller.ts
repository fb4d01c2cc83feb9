import Boom from "@hapi/boom";
import Hapi from "@hapi/hapi";

import { Attempt, Delivery } from "../../contracts";
import { DeliveryService } from "../../webhooks/delivery-service";
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
    reason: delivery.reason,
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
        private readonly deliveries: DeliveryService,
        private readonly prefix: string,
    ) {}

    public index(request: Hapi.Request) {
        const webhookId = this.existingWebhookId(request);
        const { page, limit } = request.query as { page: number; limit: number };
        const { deliveries, totalCount } = this.deliveries.page(webhookId, page, limit);
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
                attempts: this.deliveries.attempts(delivery.id).map(presentAttempt),
            },
        };
    }

    public redeliver(request: Hapi.Request, h: Hapi.ResponseToolkit) {
        const delivery = this.existingDelivery(request);
        const again = this.deliveries.redeliver(delivery.webhookId, delivery.id) ?? delivery;
        return h.response({ data: presentDelivery(again) }).code(202);
    }

    public ping(request: Hapi.Request, h: Hapi.ResponseToolkit) {
        const webhookId = this.existingWebhookId(request);
        const delivery = this.deliveries.ping(webhookId);
        return h.response({ data: delivery ? presentDelivery(delivery) : null }).code(202);
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
        const delivery = this.deliveries.find(webhookId, request.params.deliveryId);
        if (!delivery) {
            throw Boom.notFound(`delivery ${request.params.deliveryId} of webhook ${webhookId} was not found`);
        }
        return delivery;
    }
}
