import { existsSync } from "fs";
import { join } from "path";
import { Worker } from "worker_threads";

/**
 * Starts a thread running one of this folder's scripts: the compiled JavaScript where it exists
 * (the published package), else the TypeScript source through ts-node (tests, benchmarks).
 */
export const spawnWorker = (name: string, workerData: unknown): Worker => {
    const compiled = join(__dirname, `${name}.js`);
    if (existsSync(compiled)) {
        return new Worker(compiled, { workerData });
    }
    return new Worker(join(__dirname, `${name}.ts`), {
        workerData,
        execArgv: ["--require", "ts-node/register/transpile-only"],
    });
};
