import { ChildProcess, spawn } from "child_process";
import { rmSync } from "fs";
import { resolve } from "path";

export interface SpawnedPlugin {
    child: ChildProcess;
    /** The first line of output starting with the given word, without the word. */
    line: Promise<string>;
}

export const spawnPluginProcess = (args: string[], word: string): SpawnedPlugin => {
    const child = spawn(
        process.execPath,
        ["-r", "ts-node/register/transpile-only", resolve(__dirname, "plugin-process.ts"), ...args],
        { stdio: ["ignore", "pipe", "pipe"], cwd: resolve(__dirname, "../..") },
    );
    let output = "";
    const line = new Promise<string>((resolveLine, reject) => {
        child.stdout?.on("data", (chunk: Buffer) => {
            output += chunk.toString();
            const found = output.split("\n").find((candidate) => candidate.startsWith(`${word} `));
            if (found) {
                resolveLine(found.slice(word.length + 1).trim());
            }
        });
        child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.once("exit", (code, signal) =>
            reject(new Error(`exited (${code ?? signal}) before ${word}:\n${output}`)),
        );
    });
    return { child, line };
};

export const killHard = (child: ChildProcess): Promise<void> =>
    new Promise((done) => {
        if (child.exitCode !== null || child.signalCode !== null) {
            return done();
        }
        child.once("exit", () => done());
        child.kill("SIGKILL");
    });

/** A relay on a shared PostgreSQL in a process of its own (relay-process.ts), fed by commands; `dir` is removed when it exits. */
export class RelayProcess {
    public readonly child: ChildProcess;
    public readonly url: Promise<string>;
    private output = "";

    public constructor(
        dir: string,
        postgresUrl: string,
        public readonly name: string,
    ) {
        this.child = spawn(
            process.execPath,
            ["-r", "ts-node/register/transpile-only", resolve(__dirname, "relay-process.ts"), dir, postgresUrl, name],
            { stdio: ["pipe", "pipe", "pipe"], cwd: resolve(__dirname, "../..") },
        );
        this.child.stdout?.on("data", (chunk: Buffer) => (this.output += chunk.toString()));
        this.child.stderr?.on("data", (chunk: Buffer) => (this.output += chunk.toString()));
        this.url = this.line("READY");
        // The relay's folder is its own: gone with it, however it ended.
        this.child.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    }

    /** Feeds events <event>-<from>..<event>-<to>, one every `intervalMs`; settles when all were handled. */
    public feed(event: string, from: number, to: number, intervalMs: number): Promise<string> {
        this.child.stdin?.write(`FEED ${event} ${from} ${to} ${intervalMs}\n`);
        return this.line("FED", String(to));
    }

    public async stop(): Promise<void> {
        if (this.child.exitCode !== null || this.child.signalCode !== null) {
            return;
        }
        const exited = new Promise((done) => this.child.once("exit", done));
        this.child.stdin?.write("STOP\n");
        await exited;
    }

    public kill(): Promise<void> {
        return killHard(this.child);
    }

    private line(word: string, value?: string): Promise<string> {
        return new Promise((resolveLine, reject) => {
            const look = (): boolean => {
                const found = this.output
                    .split("\n")
                    .find(
                        (candidate) =>
                            candidate.startsWith(`${word} `) &&
                            (value === undefined || candidate === `${word} ${value}`),
                    );
                if (found) {
                    resolveLine(found.slice(word.length + 1).trim());
                }
                return found !== undefined;
            };
            if (look()) {
                return;
            }
            const onData = () => {
                if (look()) {
                    this.child.stdout?.off("data", onData);
                }
            };
            this.child.stdout?.on("data", onData);
            this.child.once("exit", (code, signal) =>
                reject(new Error(`relay ${this.name} exited (${code ?? signal}) before ${word}:\n${this.output}`)),
            );
        });
    }
}
