import Joi from "joi";
import RE2 from "re2";

import { CONDITION_NAMES } from "../../contracts";
import { EVENT_NAMES } from "../../events/catalogue";

export interface WebhookSchemaLimits {
    conditions: number;
    regexpLength: number;
    pageSize: number;
}

const NUMBER_TEXT = /^[+-]?\d+(\.\d+)?$/;

const NUMERIC_MESSAGE = "{{#label}} must be a number, or a string of digits for values beyond 2^53";

// JSON numbers beyond 2^53 have already lost digits when they arrive: such bounds must be strings.
// Strict: a bound is stored exactly as the client sent it, string or number.
const numeric = Joi.alternatives()
    .try(
        Joi.number().strict().messages({ "number.unsafe": "{{#label}} is beyond 2^53: send it as a string of digits" }),
        Joi.string().pattern(NUMBER_TEXT).messages({ "string.pattern.base": NUMERIC_MESSAGE }),
    )
    .messages({ "alternatives.types": NUMERIC_MESSAGE });

const regexpSource = (maxLength: number): Joi.StringSchema =>
    Joi.string()
        .max(maxLength)
        .custom((source: string, helpers) => {
            try {
                new RE2(source);
                return source;
            } catch (error) {
                const reason = error instanceof Error ? error.message : String(error);
                return helpers.message({
                    custom: `{{#label}} is not a safe regular expression (${reason}); backreferences and lookarounds are refused because they need backtracking`,
                });
            }
        });

const condition = (limits: WebhookSchemaLimits): Joi.ObjectSchema =>
    Joi.object({
        key: Joi.string().min(1).max(256).required(),
        condition: Joi.string()
            .valid(...CONDITION_NAMES)
            .required(),
        value: Joi.when("condition", {
            switch: [
                {
                    is: Joi.valid("between", "not-between"),
                    then: Joi.object({ min: numeric.required(), max: numeric.required() }).required(),
                },
                { is: Joi.valid("gt", "gte", "lt", "lte"), then: numeric.required() },
                { is: "regexp", then: regexpSource(limits.regexpLength).required() },
                { is: Joi.valid("truthy", "falsy"), then: Joi.any().strip() },
            ],
            otherwise: Joi.any().required(),
        }),
    });

const eventName = Joi.string()
    .valid(...EVENT_NAMES)
    .messages({ "any.only": "{{#label}} must be one of the events listed by GET /api/webhooks/events: {{#valids}}" });

const fields = (limits: WebhookSchemaLimits) => ({
    event: eventName,
    target: Joi.string()
        .max(2048)
        .uri({ scheme: ["http", "https"] })
        .messages({ "string.uriCustomScheme": "{{#label}} must be an http or https URL" }),
    enabled: Joi.boolean(),
    conditions: Joi.array().items(condition(limits)).max(limits.conditions),
    match: Joi.string().valid("any", "all"),
});

export const createWebhookSchema = (limits: WebhookSchemaLimits): Joi.ObjectSchema => {
    const f = fields(limits);
    return Joi.object({
        event: f.event.required(),
        target: f.target.required(),
        enabled: f.enabled.default(true),
        conditions: f.conditions.required(),
        match: f.match.default("any"),
    })
        .required()
        .label("body");
};

export const updateWebhookSchema = (limits: WebhookSchemaLimits): Joi.ObjectSchema =>
    Joi.object(fields(limits)).required().label("body");

export const webhookIdParams = Joi.object({ id: Joi.string().max(128).required() });

export const deliveryIdParams = Joi.object({
    id: Joi.string().max(128).required(),
    deliveryId: Joi.string().max(128).required(),
});

export const pageQuery = (limits: WebhookSchemaLimits): Joi.ObjectSchema =>
    Joi.object({
        page: Joi.number().integer().min(1).default(1),
        limit: Joi.number().integer().min(1).max(limits.pageSize).default(limits.pageSize),
    });
