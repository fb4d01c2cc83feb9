import { existsSync } from "fs";
import { join } from "path";
import { Worker, WorkerOptions } from "worker_threads";

// The thread script that lowers its thread's priority, then loads the thread's own (lowered-thread.ts).
const LOWERED = "lowered-thread";

/**
 * A thread script of `folder`: its compiled JavaScript where it exists, else its TypeScript through
 * ts-node. The compiled script runs with no options of the node's (a worker inherits them by
 * default): a `--require` of the node's process (ts-node in the benchmarks' hosts, an agent in a
 * node) would load into each of the plugin's threads, and ts-node alone held 15 MB of the engine
 * thread's heap.
 */
const threadScript = (folder: string, name: string): { path: string; execArgv: string[] } => {
    const compiled = join(folder, `${name}.js`);
    return existsSync(compiled)
        ? { path: compiled, execArgv: [] }
        : { path: join(folder, `${name}.ts`), execArgv: ["--require", "ts-node/register/transpile-only"] };
};

/**
 * Starts a thread running a script of `folder` (by default this one's): the compiled JavaScript
 * where it exists (the published package), else the TypeScript source through ts-node (tests,
 * benchmarks). With `niceness`, the thread runs that many steps of `nice` below the thread that
 * starts it: when the machine is busy, the node's event loop gets the CPU first.
 */
export const spawnWorker = (name: string, workerData: unknown, folder: string = __dirname, niceness = 0): Worker => {
    const script = threadScript(folder, name);
    const options: WorkerOptions = { workerData, execArgv: script.execArgv };
    // Elsewhere than on Linux, setpriority(0) would lower the whole process, the node's thread with it.
    if (niceness > 0 && process.platform === "linux") {
        const lowered = threadScript(__dirname, LOWERED);
        // Either script may be TypeScript (the lowering one runs the other): ts-node then, for both.
        const execArgv = script.execArgv.length > 0 ? script.execArgv : lowered.execArgv;
        return new Worker(lowered.path, { workerData, execArgv, argv: [script.path, String(niceness)] });
    }
    return new Worker(script.path, options);
};
