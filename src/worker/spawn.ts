import { existsSync } from "fs";
import { join } from "path";
import { Worker, WorkerOptions } from "worker_threads";

/**
 * Code that runs first in a thread of lower priority, then loads its script. On Linux each thread
 * has a nice value of its own and setpriority(0) sets the calling thread's, so this lowers the
 * plugin's thread and never the node's; elsewhere it would lower the whole process, so it is not
 * done. Raising a nice value needs no privilege; the most Linux allows is 19.
 */
const lowerPriorityThenLoad = (script: string, niceness: number): string =>
    [
        `const os = require("os");`,
        `try { os.setPriority(0, Math.min(19, os.getPriority(0) + ${niceness})); } catch {}`,
        `require(${JSON.stringify(script)});`,
    ].join("\n");

/**
 * Starts a thread running a script of `folder` (by default this one's): the compiled JavaScript
 * where it exists (the published package), else the TypeScript source through ts-node (tests,
 * benchmarks). With `niceness`, the thread runs that many steps of `nice` below the thread that
 * starts it: when the machine is busy, the node's event loop gets the CPU first.
 */
export const spawnWorker = (name: string, workerData: unknown, folder: string = __dirname, niceness = 0): Worker => {
    const compiled = join(folder, `${name}.js`);
    const script = existsSync(compiled) ? compiled : join(folder, `${name}.ts`);
    const options: WorkerOptions = {
        workerData,
        ...(script === compiled ? {} : { execArgv: ["--require", "ts-node/register/transpile-only"] }),
    };
    if (niceness > 0 && process.platform === "linux") {
        return new Worker(lowerPriorityThenLoad(script, niceness), { ...options, eval: true });
    }
    return new Worker(script, options);
};
