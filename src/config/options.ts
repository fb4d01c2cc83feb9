import { hostname } from "os";

import { configSchema } from "./schema";

export interface PluginOptions {
    enabled: boolean;
    server: {
        http: { host: string; port: number };
        whitelist: string[];
        apiKey: string;
    };
    storage: {
        path: string;
        spoolMaxBytes: number;
        /** Where the register of webhooks lives: this relay's SQLite file, or a PostgreSQL every relay shares. */
        driver: "sqlite" | "postgres";
        postgres: {
            url: string;
            poolSize: number;
            connectionTimeoutMs: number;
            leaseMs: number;
            relayName: string;
            /** What a relay with webhooks of its own does with a shared register it did not follow before (contracts.ts). */
            unknownRegister: "refuse" | "offer" | "adopt";
        };
    };
    delivery: {
        timeoutMs: number;
        concurrency: number;
        concurrencyPerTarget: number;
        concurrencyPerTargetFloor: number;
        retryScheduleSeconds: number[];
        autoDisableAfterDeadDeliveries: number;
        retentionDays: number;
        allowTargets: string[];
        denyTargets: string[];
        replaceDefaultDenyTargets: boolean;
    };
    limits: {
        bodyBytes: number;
        /** Pings of one webhook in any 60 s (429 past it). */
        pingsPerMinute: number;
        conditions: number;
        regexpLength: number;
        regexpProgramSize: number;
        regexpInputChars: number;
        regexpPatterns: number;
        conditionValueDepth: number;
        conditionValueBytes: number;
        matchingBudgetMs: number;
        pageSize: number;
    };
    threads: {
        /** How many steps of `nice` below the node's own threads the plugin's threads run (Linux). */
        niceness: number;
    };
    timeout?: number;
}

/**
 * Options as read, before configSchema() validates and converts them: a number or a boolean read
 * from an environment variable may still be the string that was set, for the schema to refuse.
 */
export type RawOptions<T = PluginOptions> = {
    [K in keyof T]: T[K] extends number | boolean
        ? T[K] | string
        : T[K] extends readonly number[]
          ? Array<number | string>
          : T[K] extends readonly unknown[]
            ? T[K]
            : T[K] extends object
              ? RawOptions<T[K]>
              : T[K];
};

/** Validates and converts options as configSchema() does, naming the first bad option. */
export const parseOptions = (raw: unknown): PluginOptions => {
    const { error, value } = configSchema.validate(raw);
    if (error) {
        throw new Error(`core-wallet-webhooks option ${error.message}`);
    }
    return resolveOptions(value);
};

/** Applies the aliases of ARK's core-webhooks to the validated configuration. */
export const resolveOptions = (validated: PluginOptions): PluginOptions => ({
    ...validated,
    storage: {
        ...validated.storage,
        postgres: {
            ...validated.storage.postgres,
            relayName: validated.storage.postgres.relayName || `${hostname()}:${validated.server.http.port}`,
        },
    },
    delivery: {
        ...validated.delivery,
        timeoutMs: validated.timeout ?? validated.delivery.timeoutMs,
    },
});
