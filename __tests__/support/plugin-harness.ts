import { mkdtempSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";

import { parseOptions, PluginOptions } from "../../src/config/options";
import { defaults } from "../../src/defaults";
import { Resolver } from "../../src/delivery/sender";
import { WebhookPlugin } from "../../src/plugin";

export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

const isObject = (value: unknown): value is Record<string, unknown> =>
    value !== null && typeof value === "object" && !Array.isArray(value);

const merge = (base: object, over: object): Record<string, unknown> => {
    const result: Record<string, unknown> = { ...base };
    for (const [key, value] of Object.entries(over)) {
        const under = result[key];
        result[key] = isObject(value) && isObject(under) ? merge(under, value) : value;
    }
    return result;
};

/** The plugin's defaults with overrides, validated by the plugin's own config schema. */
export const pluginOptions = (overrides: DeepPartial<PluginOptions> = {}): PluginOptions =>
    parseOptions(merge(merge(defaults, { server: { http: { host: "127.0.0.1", port: 0 } } }), overrides));

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
    /** Where the delivery engine runs; "inline" lets a test reach its parts (spies on prototypes). */
    engine?: "thread" | "inline";
    /** Where the plugin's kernel events go besides `kernelEvents` (a host's event dispatcher). */
    dispatchEvent?: (name: string, data: unknown) => void;
    /** Whether a kernel listener hears a name (absent: every announcement is dispatched). */
    isHeard?: (name: string) => boolean;
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
        dispatchEvent: harness.dispatchEvent ?? ((name, data) => kernelEvents.push({ name, data })),
        isHeard: harness.isHeard,
        arkWebhooksFile: harness.arkWebhooksFile,
        resolve: harness.resolve,
        engine: harness.engine,
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
