import Hapi from "@hapi/hapi";

import { DeliveriesController } from "../controllers/deliveries-controller";
import { deliveryIdParams, pageQuery, WebhookSchemaLimits, webhookIdParams } from "../schemas/webhook";

export const registerDeliveryRoutes = (
    server: Hapi.Server,
    controller: DeliveriesController,
    limits: WebhookSchemaLimits,
): void => {
    server.route([
        {
            method: "GET",
            path: "/webhooks/{id}/deliveries",
            handler: (request) => controller.index(request),
            options: { validate: { params: webhookIdParams, query: pageQuery(limits) } },
        },
        {
            method: "GET",
            path: "/webhooks/{id}/deliveries/{deliveryId}",
            handler: (request) => controller.show(request),
            options: { validate: { params: deliveryIdParams } },
        },
        {
            method: "POST",
            path: "/webhooks/{id}/deliveries/{deliveryId}/redeliver",
            handler: (request, h) => controller.redeliver(request, h),
            options: { validate: { params: deliveryIdParams } },
        },
        {
            method: "POST",
            path: "/webhooks/{id}/ping",
            handler: (request, h) => controller.ping(request, h),
            options: { validate: { params: webhookIdParams } },
        },
    ]);
};
