import { resolve } from "path";

import { Types } from "@arkecosystem/core-kernel";

import { isLogLevel, LogLevel } from "./console-logger";
import { followControls } from "./controls";
import { DataDirInUseError } from "./data-dir-lock";
import { LocalNode, PLUGIN_PATH, READY_MARKER, startLocalNode } from "./index";
import { killPostgres } from "./postgres";
import { PortInUseError } from "./processes";

/** Errors the operator fixes from one line: no stack trace. */
class StartRefused extends Error {}

// A stop that has not completed by then (PostgreSQL hung, stopped, or gone mid-query) is cut short.
const STOP_DEADLINE_MS = 11_000;
const POSTGRES_KILL_GRACE_MS = 1_000;
// Ctrl-C reaches the node twice, from the terminal and forwarded by npm: a repeat this soon is the same one.
const SAME_SIGNAL_MS = 1_000;

const port = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);

const logLevel = (): LogLevel => {
    const chosen = process.env.LOCAL_NODE_LOG_LEVEL ?? "info";
    if (!isLogLevel(chosen)) {
        throw new StartRefused(`LOCAL_NODE_LOG_LEVEL=${chosen}: choose debug, info, notice, warning or error`);
    }
    return chosen;
};

const pluginOptions = (): Types.JsonObject => {
    const text = process.env.LOCAL_NODE_PLUGIN_OPTIONS;
    if (!text) {
        return {};
    }
    let parsed: unknown;
    try {
        parsed = JSON.parse(text);
    } catch (error) {
        throw new StartRefused(`LOCAL_NODE_PLUGIN_OPTIONS is not valid JSON: ${(error as Error).message}`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        throw new StartRefused(
            'LOCAL_NODE_PLUGIN_OPTIONS must be a JSON object, such as {"delivery":{"timeoutMs":5000}}',
        );
    }
    return parsed as Types.JsonObject;
};

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms).unref());

const main = async (): Promise<void> => {
    const dataDir = resolve(process.env.LOCAL_NODE_DATA_DIR ?? resolve(PLUGIN_PATH, ".data", "local-node"));
    const quiet = process.env.LOCAL_NODE_QUIET === "1";
    const fresh = process.env.LOCAL_NODE_FRESH === "1" || process.argv.includes("--fresh");
    const startedAt = Date.now();
    let node: LocalNode | undefined = undefined;
    let stoppingSince: number | undefined = undefined;
    let endingNow = false;
    /** Ends PostgreSQL at once and the process with a failure: for a stop cut short. */
    const endNow = async (reason: string): Promise<void> => {
        endingNow = true;
        await killPostgres(dataDir, POSTGRES_KILL_GRACE_MS).catch(() => undefined);
        console.log(`${reason}: ended the node at once and killed PostgreSQL`);
        process.exit(1);
    };
    const stop = async (signal: string): Promise<void> => {
        if (stoppingSince !== undefined) {
            if (endingNow || Date.now() - stoppingSince < SAME_SIGNAL_MS) {
                return;
            }
            // A second signal asks for an end now, as most servers take it.
            return endNow(`${signal} during the stop`);
        }
        const stopStartedAt = Date.now();
        stoppingSince = stopStartedAt;
        if (node === undefined) {
            // Still starting: nothing of the node's to save, but its PostgreSQL may be up already.
            return endNow(`${signal} during the start`);
        }
        const stopped = await Promise.race([node.stop().then(() => true), sleep(STOP_DEADLINE_MS).then(() => false)]);
        if (endingNow) {
            // A second signal took over: PostgreSQL, killed, may have let the stop end meanwhile.
            return;
        }
        if (!stopped) {
            return endNow(`${signal}: the stop did not complete within ${STOP_DEADLINE_MS / 1000} s`);
        }
        console.log(`${signal}: stopped the node and PostgreSQL in ${Date.now() - stopStartedAt} ms`);
        process.exit(0);
    };
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
        process.on(signal, () => void stop(signal));
    }
    // npm passes SIGINT and SIGTERM on, but dies of SIGHUP (or SIGKILL) and leaves the node
    // orphaned: a node whose parent is gone stops as if it had been told to.
    const parent = process.ppid;
    setInterval(() => {
        if (process.ppid !== parent) {
            void stop(`parent process ${parent} exited`);
        }
    }, 250).unref();

    node = await startLocalNode({
        dataDir,
        postgresPort: port("LOCAL_NODE_POSTGRES_PORT", 5433),
        p2pPort: port("LOCAL_NODE_P2P_PORT", 4000),
        apiPort: port("LOCAL_NODE_API_PORT", 4003),
        pluginPort: port("LOCAL_NODE_PLUGIN_PORT", 4004),
        fresh,
        pluginOptions: pluginOptions(),
        quiet,
        logLevel: logLevel(),
    });
    const ready = {
        pluginUrl: node.pluginUrl,
        apiUrl: node.apiUrl,
        dataDir,
        bootMs: Date.now() - startedAt,
        height: node.height(),
        pid: process.pid,
    };
    console.log(`
core-wallet-webhooks is running inside a local ARK Core 3.9.1 node (unitnet, a block every 8 s)
  plugin:   ${ready.pluginUrl}   (try ${ready.pluginUrl}/webhooks)
  core-api: ${ready.apiUrl}
  data:     ${dataDir} (${fresh ? "a new chain" : `chain at height ${ready.height}; --fresh starts a new one`})
  booted in ${(ready.bootMs / 1000).toFixed(1)} s; Ctrl-C stops the node and PostgreSQL.
`);
    console.log(`${READY_MARKER} ${JSON.stringify(ready)}`);
    if (process.env.LOCAL_NODE_CONTROL === "stdin") {
        followControls(node);
    }
};

main().catch((error: unknown) => {
    const oneLine =
        error instanceof PortInUseError || error instanceof DataDirInUseError || error instanceof StartRefused;
    const message = oneLine ? error.message : error instanceof Error ? error.stack : String(error);
    console.error(`The local node could not start: ${message}`);
    process.exit(1);
});
