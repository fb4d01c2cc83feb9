import { existsSync } from "fs";
import { join } from "path";
import { Worker } from "worker_threads";

/**
 * Starts a thread running a script of `folder` (by default this one's): the compiled JavaScript
 * where it exists (the published package), else the TypeScript source through ts-node (tests,
 * benchmarks).
 */
export const spawnWorker = (name: string, workerData: unknown, folder: string = __dirname): Worker => {
    const compiled = join(folder, `${name}.js`);
    if (existsSync(compiled)) {
        return new Worker(compiled, { workerData });
    }
    return new Worker(join(folder, `${name}.ts`), {
        workerData,
        execArgv: ["--require", "ts-node/register/transpile-only"],
    });
};
