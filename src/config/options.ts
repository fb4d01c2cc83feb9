export interface PluginOptions {
    enabled: boolean;
    server: {
        http: { host: string; port: number };
        whitelist: string[];
        apiKey: string;
    };
    storage: { path: string; spoolMaxBytes: number };
    delivery: {
        timeoutMs: number;
        concurrency: number;
        concurrencyPerTarget: number;
        retryScheduleSeconds: number[];
        autoDisableAfterDeadDeliveries: number;
        retentionDays: number;
        allowTargets: string[];
        denyTargets: string[];
    };
    limits: {
        bodyBytes: number;
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
    timeout?: number;
}

/** Applies the aliases of ARK's core-webhooks to the validated configuration. */
export const resolveOptions = (validated: PluginOptions): PluginOptions => ({
    ...validated,
    delivery: {
        ...validated.delivery,
        timeoutMs: validated.timeout ?? validated.delivery.timeoutMs,
    },
});
