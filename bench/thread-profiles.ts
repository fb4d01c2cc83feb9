import workerThreads, { Worker, WorkerOptions } from "worker_threads";

/**
 * With BENCH_CPU_PROF=<dir>, every thread this process starts writes its CPU profile there too.
 * The plugin starts its compiled threads without the process's options (src/worker/spawn.ts), so
 * the host's own `--cpu-prof` would profile its main thread alone.
 */
export const profileThreads = (): void => {
    const dir = process.env.BENCH_CPU_PROF;
    if (!dir) {
        return;
    }
    class ProfiledWorker extends Worker {
        public constructor(filename: string | URL, options: WorkerOptions = {}) {
            super(filename, {
                ...options,
                execArgv: [...(options.execArgv ?? []), "--cpu-prof", `--cpu-prof-dir=${dir}`],
            });
        }
    }
    (workerThreads as { Worker: typeof Worker }).Worker = ProfiledWorker;
};
