import { Worker } from "worker_threads";

// Runs in a worker thread with its own connection: a checkpoint copies the WAL into the database
// file and fsyncs it, work that would otherwise stall the node's event loop inside a commit.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma("busy_timeout = 5000");
const checkpoint = () => {
    try {
        db.pragma("wal_checkpoint(PASSIVE)");
    } catch (error) {
        parentPort.postMessage({ error: String(error) });
    }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on("message", (message) => {
    if (message === "stop") {
        clearInterval(timer);
        checkpoint();
        db.close();
        parentPort.close();
    }
});
`;

const STOP_TIMEOUT_MS = 5_000;

export interface CheckpointerOptions {
    file: string;
    intervalMs: number;
    /** Called when the worker cannot checkpoint; the connections then go back to checkpointing themselves. */
    onFailure: (reason: string) => void;
}

/** Checkpoints the WAL from a worker thread, so that no commit on the event loop ever does. */
export class Checkpointer {
    private worker: Worker | undefined;
    /** Settles when the thread ends, whether asked to or not (it dies when it cannot open the file). */
    private exited: Promise<void> = Promise.resolve();

    public constructor(private readonly options: CheckpointerOptions) {}

    public start(): void {
        const worker = new Worker(WORKER_SOURCE, {
            eval: true,
            // Resolved here: an eval'd worker resolves modules from the process's folder, not ours.
            workerData: {
                driver: require.resolve("better-sqlite3"),
                file: this.options.file,
                intervalMs: this.options.intervalMs,
            },
        });
        worker.on("message", (message: { error?: string }) => message.error && this.options.onFailure(message.error));
        worker.on("error", (error) => this.options.onFailure(String(error)));
        this.exited = new Promise((resolve) => worker.once("exit", () => resolve()));
        worker.unref();
        this.worker = worker;
    }

    /** Runs a last checkpoint and ends the thread. */
    public async stop(): Promise<void> {
        const worker = this.worker;
        this.worker = undefined;
        if (!worker) {
            return;
        }
        // Held while stopping: an unreferenced worker would let the process end before the file closes.
        worker.ref();
        let timer: NodeJS.Timeout | undefined;
        worker.postMessage("stop");
        await Promise.race([this.exited, new Promise((resolve) => (timer = setTimeout(resolve, STOP_TIMEOUT_MS)))]);
        clearTimeout(timer);
        await worker.terminate();
    }
}
