import { readBoolean, readList, readNumber, readSecret, readString } from "./config/environment";
import { PluginOptions, RawOptions } from "./config/options";

/**
 * Every option of the plugin with its default. Each one can be set in the node's app.json or by
 * an environment variable `CORE_WALLET_WEBHOOKS_<NAME>`; the plugin's configSchema() validates and
 * converts them, so a bad value stops the node with a message naming the option.
 */
export const defaults: RawOptions = {
    enabled: readBoolean("ENABLED", true),
    server: {
        http: {
            host: readString("HOST", "0.0.0.0"),
            port: readNumber("PORT", 4004),
        },
        whitelist: readList("WHITELIST", ["127.0.0.1", "::1", "::ffff:127.0.0.1"]),
        apiKey: readSecret("API_KEY", ""),
    },
    storage: {
        // Empty means "<node data path>/core-wallet-webhooks/webhooks.sqlite".
        path: readString("DATABASE_PATH", ""),
        // Journaled events held in memory while the file refuses writes (disk full, I/O error).
        spoolMaxBytes: readNumber("SPOOL_MAX_BYTES", 32 * 1024 * 1024),
        // "postgres": the register lives in a PostgreSQL every relay shares (README, "Several relays").
        driver: readString("STORAGE_DRIVER", "sqlite") as PluginOptions["storage"]["driver"],
        postgres: {
            // postgres://user:password@host:5432/database
            url: readString("DATABASE_URL", ""),
            poolSize: readNumber("POSTGRES_POOL_SIZE", 4),
            connectionTimeoutMs: readNumber("POSTGRES_CONNECTION_TIMEOUT", 5_000),
            // How long a delivery a relay claimed stays its own: a relay that stops mid-attempt
            // leaves it to another after this (never less than the delivery timeout and a second).
            leaseMs: readNumber("POSTGRES_LEASE_MS", 60_000),
            // Said in the deliveries of this relay's own events (peers, lifecycle); empty: host:port.
            relayName: readString("RELAY_NAME", ""),
            // A shared register this relay did not follow before (dropped and created again, restored
            // from another dump, another database), while this relay holds webhooks: see options.ts.
            unknownRegister: readString(
                "POSTGRES_UNKNOWN_REGISTER",
                "refuse",
            ) as PluginOptions["storage"]["postgres"]["unknownRegister"],
        },
    },
    delivery: {
        timeoutMs: readNumber("TIMEOUT", 10_000),
        concurrency: readNumber("CONCURRENCY", 128),
        // Each origin's limit adapts between these (see delivery/origin-limits.ts), from 4.
        concurrencyPerTarget: readNumber("CONCURRENCY_PER_TARGET", 64),
        concurrencyPerTargetFloor: readNumber("CONCURRENCY_PER_TARGET_FLOOR", 1),
        retryScheduleSeconds: readList("RETRY_SCHEDULE", [
            "5",
            "300",
            "1800",
            "7200",
            "18000",
            "36000",
            "50400",
            "72000",
            "86400",
        ]),
        autoDisableAfterDeadDeliveries: readNumber("AUTO_DISABLE_AFTER", 5),
        retentionDays: readNumber("RETENTION_DAYS", 14),
        allowTargets: readList("ALLOW_TARGETS", []),
        // Added to the built-in list (delivery/target-policy.ts), unless replaceDefaultDenyTargets.
        denyTargets: readList("DENY_TARGETS", []),
        replaceDefaultDenyTargets: readBoolean("REPLACE_DEFAULT_DENY_TARGETS", false),
    },
    limits: {
        bodyBytes: readNumber("MAX_BODY_BYTES", 65_536),
        pingsPerMinute: readNumber("MAX_PINGS_PER_MINUTE", 10),
        conditions: readNumber("MAX_CONDITIONS", 50),
        regexpLength: readNumber("MAX_REGEXP_LENGTH", 256),
        regexpProgramSize: readNumber("MAX_REGEXP_PROGRAM_SIZE", 1000),
        regexpInputChars: readNumber("MAX_REGEXP_INPUT_CHARS", 512),
        regexpPatterns: readNumber("MAX_REGEXP_PATTERNS", 100),
        conditionValueDepth: readNumber("MAX_CONDITION_VALUE_DEPTH", 8),
        conditionValueBytes: readNumber("MAX_CONDITION_VALUE_BYTES", 8192),
        matchingBudgetMs: readNumber("MATCHING_BUDGET_MS", 0.5),
        pageSize: readNumber("MAX_PAGE_SIZE", 100),
    },
    threads: {
        // The delivery engine's, the wallet lists' and the checkpoints' threads run this much below
        // the node's own: on a busy machine the node's event loop gets the CPU first.
        niceness: readNumber("THREAD_NICENESS", 10),
    },
};
