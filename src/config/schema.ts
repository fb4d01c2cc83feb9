import Joi from "joi";

import { describeInvalidEntry } from "../net/address-list";

const addressList = Joi.array().items(
    Joi.string().custom((value: string, helpers) => {
        const problem = describeInvalidEntry(value);
        return problem ? helpers.message({ custom: problem }) : value;
    }),
);

const positiveInteger = Joi.number().integer().min(1);

export const configSchema = Joi.object({
    enabled: Joi.boolean().required(),
    server: Joi.object({
        http: Joi.object({
            host: Joi.string()
                .ip({ version: ["ipv4", "ipv6"], cidr: "forbidden" })
                .required(),
            // 0 lets the system pick a free port (tests, benchmarks).
            port: Joi.number().integer().min(0).max(65535).required(),
        }).required(),
        whitelist: addressList.required(),
        // Trimmed as the environment variable is: a key pasted with a newline must still work.
        apiKey: Joi.string()
            .allow("")
            .custom((key: string, helpers) =>
                key !== "" && key.trim() === ""
                    ? helpers.message({
                          custom: "{{#label}} is only whitespace, which would mean no key at all: set a key, or leave it empty for none",
                      })
                    : key.trim(),
            )
            .required(),
    }).required(),
    storage: Joi.object({
        path: Joi.string().allow("").required(),
        spoolMaxBytes: Joi.number().integer().min(0).required(),
        driver: Joi.string().valid("sqlite", "postgres").required(),
        postgres: Joi.object({
            url: Joi.when("...driver", {
                is: "postgres",
                then: Joi.string()
                    .uri({ scheme: ["postgres", "postgresql"] })
                    .required()
                    .messages({
                        "string.empty":
                            '{{#label}} is needed with storage.driver "postgres" (or CORE_WALLET_WEBHOOKS_DATABASE_URL)',
                    }),
                otherwise: Joi.string().allow(""),
            }),
            poolSize: positiveInteger.required(),
            connectionTimeoutMs: positiveInteger.required(),
            leaseMs: positiveInteger.min(1_000).required(),
            relayName: Joi.string().allow("").max(200).required(),
            unknownRegister: Joi.string().valid("refuse", "offer", "adopt").required(),
        }).required(),
    }).required(),
    delivery: Joi.object({
        timeoutMs: positiveInteger.required(),
        concurrency: positiveInteger.required(),
        concurrencyPerTarget: positiveInteger.required(),
        concurrencyPerTargetFloor: positiveInteger.max(Joi.ref("concurrencyPerTarget")).required(),
        retryScheduleSeconds: Joi.array().items(Joi.number().min(0)).required(),
        autoDisableAfterDeadDeliveries: Joi.number().integer().min(0).required(),
        retentionDays: positiveInteger.required(),
        allowTargets: addressList.required(),
        denyTargets: addressList.required(),
        replaceDefaultDenyTargets: Joi.boolean().required(),
    }).required(),
    limits: Joi.object({
        bodyBytes: positiveInteger.required(),
        pingsPerMinute: positiveInteger.required(),
        conditions: positiveInteger.required(),
        regexpLength: positiveInteger.required(),
        regexpProgramSize: positiveInteger.required(),
        regexpInputChars: positiveInteger.required(),
        regexpPatterns: positiveInteger.required(),
        conditionValueDepth: positiveInteger.required(),
        conditionValueBytes: positiveInteger.required(),
        matchingBudgetMs: Joi.number().positive().required(),
        pageSize: positiveInteger.required(),
    }).required(),
    threads: Joi.object({
        niceness: Joi.number().integer().min(0).max(19).required(),
    }).required(),
    // ARK's core-webhooks option, in milliseconds; when given it sets delivery.timeoutMs.
    timeout: positiveInteger.optional(),
}).unknown(true);
