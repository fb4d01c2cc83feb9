import Hapi from "@hapi/hapi";

import {
    createWebhookSchema,
    pageQuery,
    updateWebhookSchema,
    WebhookSchemaLimits,
    webhookIdParams,
} from "../schemas/webhook";
import { WebhooksController } from "../controllers/webhooks-controller";

export const registerWebhookRoutes = (
    server: Hapi.Server,
    controller: WebhooksController,
    limits: WebhookSchemaLimits,
): void => {
    server.route([
        {
            method: "GET",
            path: "/webhooks",
            handler: (request) => controller.index(request),
            options: { validate: { query: pageQuery(limits) } },
        },
        {
            method: "GET",
            path: "/webhooks/events",
            handler: () => controller.events(),
        },
        {
            method: "GET",
            path: "/webhooks/{id}",
            handler: (request) => controller.show(request),
            options: { validate: { params: webhookIdParams } },
        },
        {
            method: "POST",
            path: "/webhooks",
            handler: (request, h) => controller.store(request, h),
            options: { validate: { payload: createWebhookSchema(limits) } },
        },
        {
            method: ["PUT", "PATCH"],
            path: "/webhooks/{id}",
            handler: (request, h) => controller.update(request, h),
            options: { validate: { params: webhookIdParams, payload: updateWebhookSchema(limits) } },
        },
        {
            method: "DELETE",
            path: "/webhooks/{id}",
            handler: (request, h) => controller.destroy(request, h),
            options: { validate: { params: webhookIdParams } },
        },
    ]);
};
