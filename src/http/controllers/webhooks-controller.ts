import Boom from "@hapi/boom";
import Hapi from "@hapi/hapi";

import { publicWebhook, WebhookInput } from "../../contracts";
import { EVENT_CATALOGUE, EXCLUDED_EVENTS } from "../../events/catalogue";
import { SharedRegisterError } from "../../webhooks/shared-register";
import { RegisterLimitError, WebhookRegister } from "../../webhooks/webhook-register";
import { pageMeta } from "../pagination";

const refusingOverLimits = async <T>(change: () => Promise<T>): Promise<T> => {
    try {
        return await change();
    } catch (error) {
        if (error instanceof SharedRegisterError) {
            throw Boom.serverUnavailable(error.message);
        }
        throw error instanceof RegisterLimitError ? Boom.badData(error.message) : error;
    }
};

export const notFoundWebhook = (id: string): Boom.Boom => Boom.notFound(`webhook ${id} was not found`);

export class WebhooksController {
    public constructor(
        private readonly register: WebhookRegister,
        private readonly prefix: string,
    ) {}

    public index(request: Hapi.Request) {
        const { page, limit } = request.query as { page: number; limit: number };
        const { webhooks, totalCount } = this.register.page(page, limit);
        return {
            meta: pageMeta({ path: `${this.prefix}/webhooks`, page, limit }, webhooks.length, totalCount),
            data: webhooks.map(publicWebhook),
        };
    }

    public show(request: Hapi.Request) {
        const webhook = this.register.find(request.params.id);
        if (!webhook) {
            throw notFoundWebhook(request.params.id);
        }
        return { data: publicWebhook(webhook) };
    }

    public async store(request: Hapi.Request, h: Hapi.ResponseToolkit) {
        const webhook = await refusingOverLimits(() => this.register.create(request.payload as WebhookInput));
        return h.response({ data: { ...publicWebhook(webhook), token: webhook.token } }).code(201);
    }

    public async update(request: Hapi.Request, h: Hapi.ResponseToolkit) {
        const updated = await refusingOverLimits(() =>
            this.register.update(request.params.id, request.payload as Partial<WebhookInput>),
        );
        if (!updated) {
            throw notFoundWebhook(request.params.id);
        }
        return h.response().code(204);
    }

    public async destroy(request: Hapi.Request, h: Hapi.ResponseToolkit) {
        if (!(await this.register.delete(request.params.id))) {
            throw notFoundWebhook(request.params.id);
        }
        return h.response().code(204);
    }

    public events() {
        return { data: EVENT_CATALOGUE, meta: { excluded: EXCLUDED_EVENTS } };
    }
}
