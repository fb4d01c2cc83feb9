import { resolve } from "path";

import { LocalNode, PLUGIN_PATH, READY_MARKER, startLocalNode } from "./index";

const port = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);

const main = async (): Promise<void> => {
    const dataDir = resolve(process.env.LOCAL_NODE_DATA_DIR ?? resolve(PLUGIN_PATH, ".data", "local-node"));
    const quiet = process.env.LOCAL_NODE_QUIET === "1";
    const startedAt = Date.now();
    let node: LocalNode | undefined = undefined;
    let stopping = false;
    const stop = async (signal: string): Promise<void> => {
        if (stopping) {
            return;
        }
        stopping = true;
        console.log(`\n${signal}: stopping the node and PostgreSQL…`);
        await node?.stop();
        process.exit(0);
    };
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
        process.on(signal, () => void stop(signal));
    }

    node = await startLocalNode({
        dataDir,
        postgresPort: port("LOCAL_NODE_POSTGRES_PORT", 5433),
        p2pPort: port("LOCAL_NODE_P2P_PORT", 4000),
        apiPort: port("LOCAL_NODE_API_PORT", 4003),
        pluginPort: port("LOCAL_NODE_PLUGIN_PORT", 4004),
        pluginOptions: process.env.LOCAL_NODE_PLUGIN_OPTIONS ? JSON.parse(process.env.LOCAL_NODE_PLUGIN_OPTIONS) : {},
        consoleLogs: !quiet,
        onLog: quiet ? undefined : (line) => console.log(line),
    });
    const ready = { pluginUrl: node.pluginUrl, apiUrl: node.apiUrl, dataDir, bootMs: Date.now() - startedAt };
    console.log(`
core-wallet-webhooks is running inside a local ARK Core 3.9.1 node (unitnet, a block every 8 s)
  plugin:   ${ready.pluginUrl}   (try ${ready.pluginUrl}/webhooks)
  core-api: ${ready.apiUrl}
  data:     ${dataDir}
  booted in ${(ready.bootMs / 1000).toFixed(1)} s; Ctrl-C stops the node and PostgreSQL.
`);
    console.log(`${READY_MARKER} ${JSON.stringify(ready)}`);
};

main().catch((error: unknown) => {
    console.error("The local node could not start:", error);
    process.exit(1);
});
