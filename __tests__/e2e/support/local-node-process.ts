import { ChildProcess, spawn } from "child_process";
import { mkdtempSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";

import { READY_MARKER } from "../../../local-node";
import { CONTROL_MARKER } from "../../../local-node/controls";
import { DATABASE, DB_PASSWORD, DB_USER } from "../../../local-node/postgres";
import { freePort } from "../../support/ports";

export interface RunningNode {
    pluginUrl: string;
    apiUrl: string;
    dataDir: string;
    bootMs: number;
    /** The node's own PostgreSQL (the chain's database). */
    postgresUrl: string;
    output: () => string;
    /** Reverts the node's last blocks (see local-node/controls.ts); resolves with the height after it. */
    removeBlocks: (count: number) => Promise<number>;
    stop: () => Promise<void>;
}

const ROOT = resolve(__dirname, "../../..");
const BOOT_TIMEOUT_MS = 180_000;

const waitForExit = (child: ChildProcess, timeoutMs: number): Promise<void> =>
    new Promise((done) => {
        if (child.exitCode !== null || child.signalCode !== null) {
            return done();
        }
        const timer = setTimeout(() => {
            child.kill("SIGKILL");
            done();
        }, timeoutMs);
        child.once("exit", () => {
            clearTimeout(timer);
            done();
        });
    });

/**
 * Runs `local-node/main.ts` — the module `npm start` runs — in its own process, as an operator
 * would, and resolves once the node has booted with the plugin inside.
 */
export const startNodeProcess = async (pluginOptions: Record<string, unknown> = {}): Promise<RunningNode> => {
    const dataDir = mkdtempSync(join(tmpdir(), "cww-e2e-"));
    const postgresPort = await freePort();
    const env = {
        ...process.env,
        LOCAL_NODE_DATA_DIR: dataDir,
        LOCAL_NODE_QUIET: "1",
        LOCAL_NODE_POSTGRES_PORT: String(postgresPort),
        LOCAL_NODE_P2P_PORT: String(await freePort()),
        LOCAL_NODE_API_PORT: String(await freePort()),
        LOCAL_NODE_PLUGIN_PORT: String(await freePort()),
        LOCAL_NODE_PLUGIN_OPTIONS: JSON.stringify(pluginOptions),
        LOCAL_NODE_CONTROL: "stdin",
    };
    const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", "local-node/main.ts"], {
        cwd: ROOT,
        env,
        stdio: ["pipe", "pipe", "pipe"],
    });
    let output = "";
    const ready = new Promise<{ pluginUrl: string; apiUrl: string; bootMs: number }>((resolveReady, reject) => {
        const timer = setTimeout(() => reject(new Error(`the node did not boot in time:\n${output}`)), BOOT_TIMEOUT_MS);
        const onData = (chunk: Buffer): void => {
            output += chunk.toString();
            const line = output.split("\n").find((candidate) => candidate.startsWith(READY_MARKER));
            if (line) {
                clearTimeout(timer);
                resolveReady(JSON.parse(line.slice(READY_MARKER.length)));
            }
        };
        child.stdout?.on("data", onData);
        child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.once("exit", (code) => {
            clearTimeout(timer);
            reject(new Error(`the node exited with ${code} before it booted:\n${output}`));
        });
    });
    let answersSeen = 0;
    const removeBlocks = async (count: number): Promise<number> => {
        const before = answersSeen;
        child.stdin?.write(`${JSON.stringify({ removeBlocks: count })}\n`);
        for (;;) {
            const answers = output.split("\n").filter((line) => line.startsWith(CONTROL_MARKER));
            if (answers.length > before) {
                answersSeen = answers.length;
                const reply = JSON.parse(answers[before].slice(CONTROL_MARKER.length)) as {
                    height?: number;
                    error?: string;
                };
                if (reply.height === undefined) {
                    throw new Error(`the node did not remove ${count} blocks: ${reply.error}`);
                }
                return reply.height;
            }
            await new Promise((resolveTick) => child.stdout?.once("data", resolveTick));
        }
    };
    const stop = async (): Promise<void> => {
        child.kill("SIGINT");
        await waitForExit(child, 30_000);
        rmSync(dataDir, { recursive: true, force: true });
    };
    try {
        const urls = await ready;
        const postgresUrl = `postgres://${DB_USER}:${DB_PASSWORD}@127.0.0.1:${postgresPort}/${DATABASE}`;
        return { ...urls, dataDir, postgresUrl, output: () => output, removeBlocks, stop };
    } catch (error) {
        await stop();
        throw error;
    }
};
