import { mkdtempSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";

import { PluginOptions, resolveOptions } from "../../src/config/options";
import { configSchema } from "../../src/config/schema";
import { defaults } from "../../src/defaults";
import { Resolver } from "../../src/delivery/sender";
import { WebhookPlugin } from "../../src/plugin";

export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

const isObject = (value: unknown): value is Record<string, unknown> =>
    value !== null && typeof value === "object" && !Array.isArray(value);

const merge = (base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> => {
    const result = { ...base };
    for (const [key, value] of Object.entries(over)) {
        result[key] =
            isObject(value) && isObject(base[key]) ? merge(base[key] as Record<string, unknown>, value) : value;
    }
    return result;
};

/** The plugin's defaults with overrides, validated by the plugin's own config schema. */
export const pluginOptions = (overrides: DeepPartial<PluginOptions> = {}): PluginOptions => {
    const local = { server: { http: { host: "127.0.0.1", port: 0 } } };
    const raw = merge(
        merge(defaults as unknown as Record<string, unknown>, local),
        overrides as Record<string, unknown>,
    );
    const { error, value } = configSchema.validate(raw);
    if (error) {
        throw error;
    }
    return resolveOptions(value as PluginOptions);
};

export interface RunningPlugin {
    plugin: WebhookPlugin;
    url: string;
    file: string;
    dir: string;
    kernelEvents: Array<{ name: string; data: unknown }>;
    logs: string[];
    stop(options?: { keepFiles?: boolean }): Promise<void>;
}

export interface HarnessOptions {
    dir?: string;
    arkWebhooksFile?: string;
    resolve?: Resolver;
}

/** The plugin as the node runs it, on a real SQLite file and a real port of 127.0.0.1. */
export const startPlugin = async (
    overrides: DeepPartial<PluginOptions> = {},
    harness: HarnessOptions = {},
): Promise<RunningPlugin> => {
    const dir = harness.dir ?? mkdtempSync(join(tmpdir(), "cww-test-"));
    const file = join(dir, "webhooks.sqlite");
    const kernelEvents: RunningPlugin["kernelEvents"] = [];
    const logs: string[] = [];
    const plugin = new WebhookPlugin(pluginOptions(overrides), {
        file,
        name: "core-wallet-webhooks",
        version: "0.0.0-test",
        logger: {
            info: (message) => logs.push(`info: ${message}`),
            warning: (message) => logs.push(`warning: ${message}`),
            error: (message) => logs.push(`error: ${message}`),
        },
        dispatchEvent: (name, data) => kernelEvents.push({ name, data }),
        arkWebhooksFile: harness.arkWebhooksFile,
        resolve: harness.resolve,
    });
    await plugin.start();
    return {
        plugin,
        url: plugin.uri,
        file,
        dir,
        kernelEvents,
        logs,
        stop: async ({ keepFiles = false } = {}) => {
            await plugin.stop();
            if (!keepFiles) {
                rmSync(dir, { recursive: true, force: true });
            }
        },
    };
};
