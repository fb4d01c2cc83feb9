import { readFileSync, readdirSync, readlinkSync } from "fs";
import { createServer } from "net";

export const isAlive = (pid: number): boolean => {
    try {
        process.kill(pid, 0);
        return true;
    } catch (error) {
        // EPERM: alive, owned by another user (PostgreSQL runs as "postgres" under root).
        return (error as NodeJS.ErrnoException).code === "EPERM";
    }
};

/** The command line of a process, or "" where /proc cannot tell. */
export const describeProcess = (pid: number): string => {
    try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ").slice(0, 120);
    } catch {
        return "";
    }
};

export const waitUntilGone = async (pid: number, timeoutMs: number): Promise<boolean> => {
    const deadline = Date.now() + timeoutMs;
    while (isAlive(pid)) {
        if (Date.now() > deadline) {
            return false;
        }
        await new Promise((done) => setTimeout(done, 100));
    }
    return true;
};

const LISTEN = "0A";

const listeningInodes = (port: number): Set<string> => {
    const inodes = new Set<string>();
    for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
        let rows: string[] = [];
        try {
            rows = readFileSync(table, "utf8").split("\n").slice(1);
        } catch {
            continue;
        }
        for (const row of rows) {
            const columns = row.trim().split(/\s+/);
            const localPort = Number.parseInt(columns[1]?.split(":")[1] ?? "", 16);
            if (localPort === port && columns[3] === LISTEN && columns[9]) {
                inodes.add(columns[9]);
            }
        }
    }
    return inodes;
};

/** Which process listens on a TCP port, read from /proc (Linux); undefined where it cannot tell. */
export const portHolder = (port: number): { pid: number; command: string } | undefined => {
    const inodes = listeningInodes(port);
    if (inodes.size === 0) {
        return undefined;
    }
    for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
        let descriptors: string[] = [];
        try {
            descriptors = readdirSync(`/proc/${entry}/fd`);
        } catch {
            continue;
        }
        for (const descriptor of descriptors) {
            try {
                const link = readlinkSync(`/proc/${entry}/fd/${descriptor}`);
                if (inodes.has(link.slice("socket:[".length, -1)) && link.startsWith("socket:[")) {
                    return { pid: Number(entry), command: describeProcess(Number(entry)) };
                }
            } catch {
                // The process or descriptor went away while we looked.
            }
        }
    }
    return undefined;
};

const canListen = (port: number): Promise<boolean> =>
    new Promise((done) => {
        const server = createServer();
        server.once("error", () => done(false));
        server.listen({ port, host: "127.0.0.1", exclusive: true }, () => server.close(() => done(true)));
    });

export interface NamedPort {
    port: number;
    /** What the node uses it for, e.g. "core-api". */
    use: string;
    /** The environment variable that chooses another. */
    variable: string;
}

export class PortInUseError extends Error {}

/** Fails with one line naming the port, what holds it and what to do, before anything starts. */
export const assertPortsFree = async (ports: NamedPort[]): Promise<void> => {
    for (const { port, use, variable } of ports) {
        if (await canListen(port)) {
            continue;
        }
        const holder = portHolder(port);
        const who = holder ? `pid ${holder.pid} (${holder.command || "unknown command"})` : "another program";
        const remedy = holder ? `stop it (kill ${holder.pid})` : "stop it";
        throw new PortInUseError(
            `port ${port} (${use}) is in use by ${who}: ${remedy} or choose another port with ${variable}=<port>`,
        );
    }
};
