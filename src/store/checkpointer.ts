import { Worker } from "worker_threads";

import { CheckpointWorkerData, FromCheckpointer, ToCheckpointer } from "../worker/messages";
import { spawnWorker } from "../worker/spawn";

const STOP_TIMEOUT_MS = 5_000;

export interface CheckpointerOptions {
    file: string;
    intervalMs: number;
    /** How far below the node's threads the checkpoint thread runs (see worker/spawn.ts); none by default. */
    niceness?: number;
    /** Called when the worker cannot checkpoint; the connections then go back to checkpointing themselves. */
    onFailure: (reason: string) => void;
    /** Called once when the database file was deleted, moved or replaced while in use. */
    onFileGone: (reason: string) => void;
}

/** Checkpoints the WAL from a worker thread, so that no commit on the event loop ever does. */
export class Checkpointer {
    private worker: Worker | undefined;
    /** Settles when the thread ends, whether asked to or not (it dies when it cannot open the file). */
    private exited: Promise<void> = Promise.resolve();

    public constructor(private readonly options: CheckpointerOptions) {}

    public start(): void {
        const data: CheckpointWorkerData = { file: this.options.file, intervalMs: this.options.intervalMs };
        const worker = spawnWorker("checkpoint-worker", data, undefined, this.options.niceness);
        worker.on("message", (message: FromCheckpointer) =>
            message.kind === "file-gone"
                ? this.options.onFileGone(message.reason)
                : this.options.onFailure(message.reason),
        );
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
        const stop: ToCheckpointer = { kind: "stop" };
        worker.postMessage(stop);
        await Promise.race([this.exited, new Promise((resolve) => (timer = setTimeout(resolve, STOP_TIMEOUT_MS)))]);
        clearTimeout(timer);
        await worker.terminate();
    }
}
