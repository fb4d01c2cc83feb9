import { rmSync } from "fs";
import { resolve } from "path";

import { isLogLevel, LogLevel } from "./console-logger";
import { LocalNode, PLUGIN_PATH, READY_MARKER, startLocalNode } from "./index";
import { PortInUseError } from "./processes";

const port = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);

const logLevel = (): LogLevel => {
    const chosen = process.env.LOCAL_NODE_LOG_LEVEL ?? "info";
    if (!isLogLevel(chosen)) {
        throw new Error(`LOCAL_NODE_LOG_LEVEL=${chosen}: choose debug, info, notice, warning or error`);
    }
    return chosen;
};

const main = async (): Promise<void> => {
    const dataDir = resolve(process.env.LOCAL_NODE_DATA_DIR ?? resolve(PLUGIN_PATH, ".data", "local-node"));
    const quiet = process.env.LOCAL_NODE_QUIET === "1";
    const fresh = process.env.LOCAL_NODE_FRESH === "1" || process.argv.includes("--fresh");
    const startedAt = Date.now();
    let node: LocalNode | undefined = undefined;
    let stopping = false;
    const stop = async (signal: string): Promise<void> => {
        if (stopping) {
            return;
        }
        stopping = true;
        const stopStartedAt = Date.now();
        await node?.stop();
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

    if (fresh) {
        // The chain, its genesis block and the plugin's register and deliveries go together.
        rmSync(dataDir, { recursive: true, force: true });
    }
    node = await startLocalNode({
        dataDir,
        postgresPort: port("LOCAL_NODE_POSTGRES_PORT", 5433),
        p2pPort: port("LOCAL_NODE_P2P_PORT", 4000),
        apiPort: port("LOCAL_NODE_API_PORT", 4003),
        pluginPort: port("LOCAL_NODE_PLUGIN_PORT", 4004),
        pluginOptions: process.env.LOCAL_NODE_PLUGIN_OPTIONS ? JSON.parse(process.env.LOCAL_NODE_PLUGIN_OPTIONS) : {},
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
};

main().catch((error: unknown) => {
    const message = error instanceof PortInUseError || !(error instanceof Error) ? String(error) : error.stack;
    console.error(`The local node could not start: ${error instanceof PortInUseError ? error.message : message}`);
    process.exit(1);
});
