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

/**
 * A lowered thread's first code: it lowers the thread's priority, then loads its modules
 * (process.argv: node, "[worker eval]", the niceness, the modules). It is given to the thread as
 * its source, so that nothing loads before it, and may use globals only (no import of this module
 * reaches the thread). On Linux setpriority(0) sets the calling thread's nice value only; raising it
 * needs no privilege; 19 is the most there is. Where the thread's script is TypeScript (tests,
 * benchmarks), ts-node's hook loads after it: lowered by a TypeScript script of its own, the wallet
 * thread loaded ts-node and TypeScript's compiler for 320 ms at the node's priority first (perf sched,
 * 100,000 wallets), and the node's thread waited for the CPU it took: 12-18 ms stalls.
 */
// Not instrumented for coverage: its text is the thread's source, where a coverage counter of this
// module would be an undefined name (`jest --coverage` failed every lowered thread's start).
/* istanbul ignore next */
const lowerThenLoad = (): void => {
    const [niceness, ...modules] = process.argv.slice(2);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const os = require("os") as typeof import("os");
    try {
        os.setPriority(0, Math.min(19, os.getPriority(0) + Number(niceness)));
    } catch {
        // Runs at the node's priority, as it would without the option.
    }
    for (const module of modules) {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        require(module);
    }
};

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
        return new Worker(`(${lowerThenLoad.toString()})();`, {
            eval: true,
            workerData,
            execArgv: [],
            argv: [String(niceness), ...modules],
        });
    }
    const script = modules[modules.length - 1];
    const preload = modules.slice(0, -1).flatMap((module) => ["--require", module]);
    return new Worker(script, { workerData, execArgv: preload });
};
