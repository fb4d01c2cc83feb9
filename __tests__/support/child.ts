import { ChildProcess, spawn } from "child_process";
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
