import { Container, Contracts, Services, Types } from "@arkecosystem/core-kernel";
import { Managers } from "@arkecosystem/crypto";
import { Sandbox } from "@arkecosystem/core-test-framework/dist/app";
import { mkdirSync, readdirSync, rmSync } from "fs";
import { resolve } from "path";

import { name as PLUGIN_NAME } from "../package.json";
import { ConsoleLogger, LogLevel } from "./console-logger";
import { claimDataDir, DataDirLock, LOCK_FILE } from "./data-dir-lock";
import { keepGenesisBlock, keptGenesisBlock } from "./genesis";
import { answerNtpLocally, forgetMultipleResolves, LOCAL_DNS_HOSTS, LOCAL_NTP_HOST } from "./offline-checks";
import {
    closeConnectionsLeftOpen,
    DATABASE,
    DB_PASSWORD,
    DB_USER,
    startPostgres,
    stopLeftoverPostgres,
} from "./postgres";
import { assertPortsFree } from "./processes";

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
    /** Start a new chain and an empty register: everything in dataDir is deleted first. */
    fresh?: boolean;
    /** Options given to this plugin, merged over its defaults. */
    pluginOptions?: Types.JsonObject;
    /** The least severe level of the node's log printed (default info). */
    logLevel?: LogLevel;
    /** Print only this plugin's warnings and errors. */
    quiet?: boolean;
    /** Where log lines go (default: standard output). */
    onLog?: (line: string) => void;
}

export interface LocalNode {
    sandbox: Sandbox;
    pluginUrl: string;
    apiUrl: string;
    dataDir: string;
    /** The height of the node's last block. */
    height(): number;
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
        // core-api allows 100 requests a minute per caller by default: too few to compare its answers with ours.
        CORE_API_RATE_LIMIT_DISABLED: "1",
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

/** The Sandbox's own unitnet: 51 delegates, a block every 8 s. */
const UNITNET_FLAGS = {
    network: "unitnet",
    premine: "15300000000000000",
    delegates: 51,
    blocktime: 8,
    maxTxPerBlock: 150,
    maxBlockPayload: 2097152,
    rewardHeight: 75600,
    rewardAmount: 200000000,
    pubKeyHash: 23,
    wif: 186,
    token: "UARK",
    symbol: "UѦ",
    explorer: "http://uexplorer.ark.io",
    distribute: true,
};

/** The local node's logger is the kernel's log service, chosen before any plugin registers. */
const useLogger = async (app: Sandbox["app"], logger: ConsoleLogger): Promise<void> => {
    const logManager = app.get<Services.Log.LogManager>(Container.Identifiers.LogManager);
    await logManager.extend("local-node", async () => logger);
    logManager.setDefaultDriver("local-node");
};

const portsOf = (options: LocalNodeOptions) => [
    { port: options.postgresPort, use: "PostgreSQL", variable: "LOCAL_NODE_POSTGRES_PORT" },
    { port: options.p2pPort, use: "core-p2p", variable: "LOCAL_NODE_P2P_PORT" },
    { port: options.apiPort, use: "core-api", variable: "LOCAL_NODE_API_PORT" },
    { port: options.pluginPort, use: "core-wallet-webhooks", variable: "LOCAL_NODE_PLUGIN_PORT" },
];

/**
 * The plugin's storage options: its SQLite file in the data folder, and with `storage.driver`
 * "postgres" and no URL, the shared register in this node's own PostgreSQL.
 */
const localStorageOptions = (options: LocalNodeOptions): Types.JsonObject => {
    const given = (options.pluginOptions?.storage as Types.JsonObject | undefined) ?? {};
    const postgres = (given.postgres as Types.JsonObject | undefined) ?? {};
    return {
        ...given,
        path: resolve(options.dataDir, "webhooks.sqlite"),
        ...(given.driver === "postgres" && !postgres.url
            ? {
                  postgres: {
                      ...postgres,
                      url: `postgres://${DB_USER}:${DB_PASSWORD}@127.0.0.1:${options.postgresPort}/${DATABASE}`,
                  },
              }
            : {}),
    };
};

/** The chain, its genesis block and the plugin's register and deliveries go together: all are deleted. */
const deleteDataKeepingLock = (dataDir: string): void => {
    for (const entry of readdirSync(dataDir).filter((name) => name !== LOCK_FILE)) {
        rmSync(resolve(dataDir, entry), { recursive: true, force: true });
    }
};

/**
 * Boots a real single-node ARK Core 3.9.1 network (unitnet, a block every 8 s) on an embedded
 * PostgreSQL, with core-api and this plugin, and forges until stop() is called. The chain, its
 * genesis block and the plugin's register live in dataDir: a second start continues them.
 */
export const startLocalNode = async (options: LocalNodeOptions): Promise<LocalNode> => {
    mkdirSync(options.dataDir, { recursive: true });
    // Before anything in the folder is read, stopped or deleted: a node alive on it is left alone.
    const lock = claimDataDir(options.dataDir);
    try {
        return await bootLocalNode(options, lock);
    } catch (error) {
        lock.release();
        throw error;
    }
};

const bootLocalNode = async (options: LocalNodeOptions, lock: DataDirLock): Promise<LocalNode> => {
    if (options.fresh) {
        deleteDataKeepingLock(options.dataDir);
    }
    const logger = new ConsoleLogger({
        level: options.logLevel ?? "info",
        quiet: options.quiet ?? false,
        pluginName: PLUGIN_NAME,
        write: options.onLog,
    });
    const info = (line: string): void => logger.info(line);
    const postgresLog = logger.shows("debug", "") ? (line: string) => logger.debug(line) : undefined;
    // Said whatever the log level: it stops a process the operator may not know is running.
    await stopLeftoverPostgres(options.dataDir, (line) => console.log(line));
    await assertPortsFree(portsOf(options));
    const postgres = await startPostgres({ dataDir: options.dataDir, port: options.postgresPort, onLog: postgresLog });
    const environment = setEnvironment(options);
    answerNtpLocally(info);
    const sandbox = new Sandbox();
    sandbox.withCryptoOptions({ flags: UNITNET_FLAGS, genesisBlock: keptGenesisBlock(options.dataDir) });
    const plugins = [...CORE_PLUGINS, PLUGIN_PATH];
    // Options live in app.json's plugin entries, exactly where an operator writes them.
    const pluginOptions: Record<string, Types.JsonObject> = {
        "@arkecosystem/core-blockchain": { networkStart: true },
        "@arkecosystem/core-p2p": {
            server: { hostname: "127.0.0.1", port: options.p2pPort },
            ignoreMinimumNetworkReach: true,
            // The node is the whole network: it looks for no peers (and so rejects none, every block).
            skipDiscovery: true,
            dns: LOCAL_DNS_HOSTS,
            ntp: [LOCAL_NTP_HOST],
        },
        "@arkecosystem/core-api": { server: { http: { enabled: true, host: "127.0.0.1", port: options.apiPort } } },
        "@arkecosystem/core-forger": { hosts: [{ hostname: "127.0.0.1", port: options.p2pPort }] },
        [PLUGIN_PATH]: {
            ...options.pluginOptions,
            server: {
                http: { host: "127.0.0.1", port: options.pluginPort },
                ...((options.pluginOptions?.server as Types.JsonObject | undefined) ?? {}),
            },
            storage: localStorageOptions(options),
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
            keepGenesisBlock(options.dataDir);
            await app.bootstrap({ flags: { token: "ark", network: "unitnet", env: "test", processType: "core" } });
            await useLogger(app, logger);
            forgetMultipleResolves();
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
        height: () => sandbox.app.get<Contracts.State.StateStore>(Container.Identifiers.StateStore).getLastHeight(),
        stop: async () => {
            if (stopped) {
                return;
            }
            stopped = true;
            await sandbox.dispose().catch(() => undefined);
            await closeConnectionsLeftOpen();
            await postgres.stop();
            lock.release();
        },
    };
};
