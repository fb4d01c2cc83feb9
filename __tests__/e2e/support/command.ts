import { ChildProcess, spawn } from "child_process";
import { resolve } from "path";

const ROOT = resolve(__dirname, "../../..");

/** A command of the README run as an operator runs it, from the repository's root, output kept. */
export class Command {
    public readonly child: ChildProcess;
    public readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
    private text = "";

    public constructor(commandLine: string, env: Record<string, string> = {}) {
        const [program, ...args] = commandLine.split(/\s+/).filter(Boolean);
        this.child = spawn(program, args, {
            cwd: ROOT,
            env: { ...process.env, ...env },
            stdio: ["ignore", "pipe", "pipe"],
        });
        const collect = (chunk: Buffer): void => {
            this.text += chunk.toString();
        };
        this.child.stdout?.on("data", collect);
        this.child.stderr?.on("data", collect);
        this.exited = new Promise((done) => this.child.once("exit", (code, signal) => done({ code, signal })));
    }

    public get output(): string {
        return this.text;
    }

    public get pid(): number {
        return this.child.pid as number;
    }

    /** The first line matching, once it is printed (fails with the output so far after timeoutMs). */
    public async line(pattern: RegExp, timeoutMs: number): Promise<string> {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
            const found = this.text.split("\n").find((line) => pattern.test(line));
            if (found !== undefined) {
                return found;
            }
            if (Date.now() > deadline || this.child.exitCode !== null) {
                throw new Error(`no line matching ${pattern} within ${timeoutMs} ms; output:\n${this.text}`);
            }
            await new Promise((done) => setTimeout(done, 100));
        }
    }

    /** Waits for the exit; kills the process (and fails) after timeoutMs. */
    public async exit(timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
        const timer = setTimeout(() => this.child.kill("SIGKILL"), timeoutMs);
        const result = await this.exited;
        clearTimeout(timer);
        return result;
    }
}
