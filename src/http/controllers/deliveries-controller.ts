import Boom from "@hapi/boom";
import Hapi from "@hapi/hapi";

import { Attempt, Delivery } from "../../contracts";
import { DeliveryService } from "../../webhooks/delivery-service";
import { PingLimitError } from "../../webhooks/ping-limiter";
import { SharedRegisterError } from "../../webhooks/shared-register";
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

/** The shared outbox out of reach: 503, with the message naming the database. */
const unavailableAs503 = async <T>(read: () => Promise<T>): Promise<T> => {
    try {
        return await read();
    } catch (error) {
        throw error instanceof SharedRegisterError ? Boom.serverUnavailable(error.message) : error;
    }
};

export class DeliveriesController {
    public constructor(
        private readonly register: WebhookRegister,
        private readonly deliveries: DeliveryService,
        private readonly prefix: string,
    ) {}

    public async index(request: Hapi.Request) {
        const webhookId = this.existingWebhookId(request);
        const { page, limit } = request.query as { page: number; limit: number };
        const { deliveries, totalCount } = await unavailableAs503(() => this.deliveries.page(webhookId, page, limit));
        const path = `${this.prefix}/webhooks/${encodeURIComponent(webhookId)}/deliveries`;
        return {
            meta: pageMeta({ path, page, limit }, deliveries.length, totalCount),
            data: deliveries.map(presentDelivery),
        };
    }

    public async show(request: Hapi.Request) {
        const delivery = await this.existingDelivery(request);
        const attempts = await unavailableAs503(() => this.deliveries.attempts(delivery.id));
        return {
            data: {
                ...presentDelivery(delivery),
                body: JSON.parse(delivery.body) as unknown,
                attempts: attempts.map(presentAttempt),
            },
        };
    }

    public async redeliver(request: Hapi.Request, h: Hapi.ResponseToolkit) {
        const delivery = await this.existingDelivery(request);
        const again =
            (await unavailableAs503(() => this.deliveries.redeliver(delivery.webhookId, delivery.id))) ?? delivery;
        return h.response({ data: presentDelivery(again) }).code(202);
    }

    public ping(request: Hapi.Request, h: Hapi.ResponseToolkit) {
        const webhookId = this.existingWebhookId(request);
        try {
            return h.response({ data: presentDelivery(this.deliveries.ping(webhookId)) }).code(202);
        } catch (error) {
            if (error instanceof PingLimitError) {
                const refusal = Boom.tooManyRequests(error.message);
                refusal.output.headers["Retry-After"] = String(error.retryAfterSeconds);
                throw refusal;
            }
            throw error;
        }
    }

    private existingWebhookId(request: Hapi.Request): string {
        const webhook = this.register.find(request.params.id);
        if (!webhook) {
            throw notFoundWebhook(request.params.id);
        }
        return webhook.id;
    }

    private async existingDelivery(request: Hapi.Request): Promise<Delivery> {
        const webhookId = this.existingWebhookId(request);
        const delivery = await unavailableAs503(() => this.deliveries.find(webhookId, request.params.deliveryId));
        if (!delivery) {
            throw Boom.notFound(`delivery ${request.params.deliveryId} of webhook ${webhookId} was not found`);
        }
        return delivery;
    }
}
