import Joi from "joi";
import RE2 from "re2";

import { CONDITION_NAMES } from "../../contracts";
import { parseTarget } from "../../net/target-url";
import { EVENT_NAMES, EXCLUDED_EVENTS } from "../../events/catalogue";
import { toDecimal } from "../../events/decimal";
import { estimateRegexpCost } from "../../events/regexp-budget";
import { depthOf } from "./value-shape";

export interface WebhookSchemaLimits {
    conditions: number;
    regexpLength: number;
    regexpProgramSize: number;
    conditionValueDepth: number;
    conditionValueBytes: number;
    pageSize: number;
}

const NUMERIC_MESSAGE = "{{#label}} must be a number, or a string of digits for values beyond 2^53";

// JSON numbers beyond 2^53 have already lost digits when they arrive: such bounds must be strings.
// Strict: a bound is stored exactly as the client sent it, string or number.
const numeric = Joi.alternatives()
    .try(
        Joi.number().strict().messages({ "number.unsafe": "{{#label}} is beyond 2^53: send it as a string of digits" }),
        // The matcher's own grammar: a bound is accepted exactly when the matcher can read it.
        Joi.string().custom((text: string, helpers) =>
            toDecimal(text) === undefined ? helpers.message({ custom: NUMERIC_MESSAGE }) : text,
        ),
    )
    .messages({ "alternatives.types": NUMERIC_MESSAGE });

const regexpSource = (limits: WebhookSchemaLimits): Joi.StringSchema =>
    Joi.string()
        .max(limits.regexpLength)
        .custom((source: string, helpers) => {
            const cost = estimateRegexpCost(source);
            if (!cost.ok) {
                return helpers.message({
                    custom: `{{#label}} is not a safe regular expression (${cost.reason}); backreferences and lookarounds are refused because they need backtracking`,
                });
            }
            if (cost.size > limits.regexpProgramSize) {
                return helpers.message({
                    custom: `{{#label}} is too large a regular expression: its program would have about ${cost.size} instructions, over limits.regexpProgramSize (${limits.regexpProgramSize}); write fewer or smaller counted repetitions`,
                });
            }
            try {
                new RE2(source);
                return source;
            } catch (error) {
                const reason = error instanceof Error ? error.message : String(error);
                return helpers.message({ custom: `{{#label}} is not a safe regular expression (${reason})` });
            }
        });

// Checked before anything serialises the value: a deeply nested one would overflow the stack.
const conditionValue = (limits: WebhookSchemaLimits): Joi.AnySchema =>
    Joi.any().custom((value: unknown, helpers) => {
        if (depthOf(value, limits.conditionValueDepth) > limits.conditionValueDepth) {
            return helpers.message({
                custom: `{{#label}} nests deeper than limits.conditionValueDepth (${limits.conditionValueDepth} levels)`,
            });
        }
        if (Buffer.byteLength(JSON.stringify(value) ?? "") > limits.conditionValueBytes) {
            return helpers.message({
                custom: `{{#label}} is larger than limits.conditionValueBytes (${limits.conditionValueBytes} bytes of JSON)`,
            });
        }
        return value;
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
                { is: "regexp", then: regexpSource(limits).required() },
                // ARK's plugin accepts a value here; it is kept as sent and the matcher ignores it.
                { is: Joi.valid("truthy", "falsy"), then: conditionValue(limits).optional() },
            ],
            otherwise: conditionValue(limits).required(),
        }),
    });

const excludedReasons = new Map(EXCLUDED_EVENTS.map((entry) => [entry.name, entry.reason]));

const eventName = Joi.string()
    .custom((name: string, helpers) => {
        const reason = excludedReasons.get(name);
        if (reason) {
            return helpers.message({ custom: `{{#label}} ${name} cannot be subscribed to: ${reason}` });
        }
        return EVENT_NAMES.has(name) ? name : helpers.error("any.only", { valids: [...EVENT_NAMES] });
    })
    .messages({ "any.only": "{{#label}} must be one of the events listed by GET /api/webhooks/events: {{#valids}}" });

const fields = (limits: WebhookSchemaLimits) => ({
    event: eventName,
    target: Joi.string()
        .max(2048)
        .custom((target: string, helpers) => {
            const parsed = parseTarget(target);
            return parsed.ok ? target : helpers.message({ custom: `{{#label}} ${parsed.reason}` });
        }),
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
