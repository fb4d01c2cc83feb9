import { existsSync } from "fs";
import { join } from "path";
import { Worker } from "worker_threads";

/**
 * A thread script of `folder`: its compiled JavaScript where it exists, else its TypeScript, which
 * loads after ts-node's hook. The thread runs with no options of the node's (a worker inherits them
 * by default): a `--require` of the node's process (ts-node in the benchmarks' hosts, an agent in a
 * node) would load into each of the plugin's threads, and ts-node alone held 15 MB of the engine
 * thread's heap.
 */
const threadModules = (folder: string, name: string): string[] => {
    const compiled = join(folder, `${name}.js`);
    return existsSync(compiled)
        ? [compiled]
        : [require.resolve("ts-node/register/transpile-only"), join(folder, `${name}.ts`)];
};

/** A lowered thread's first code (see the file): shipped as it is, two folders above this module's. */
const LOWER_THEN_LOAD = join(__dirname, "..", "..", "threads", "lower-then-load.cjs");

/**
 * Starts a thread running a script of `folder` (by default this one's): the compiled JavaScript
 * where it exists (the published package), else the TypeScript source through ts-node (tests,
 * benchmarks). With `niceness`, the thread runs that many steps of `nice` below the thread that
 * starts it, from its first line on: when the machine is busy, the node's event loop gets the CPU
 * first.
 */
export const spawnWorker = (name: string, workerData: unknown, folder: string = __dirname, niceness = 0): Worker => {
    const modules = threadModules(folder, name);
    // Elsewhere than on Linux, setpriority(0) would lower the whole process, the node's thread with it.
    if (niceness > 0 && process.platform === "linux") {
        return new Worker(LOWER_THEN_LOAD, {
            workerData,
            execArgv: [],
            argv: [String(niceness), ...modules],
        });
    }
    const script = modules[modules.length - 1];
    const preload = modules.slice(0, -1).flatMap((module) => ["--require", module]);
    return new Worker(script, { workerData, execArgv: preload });
};
