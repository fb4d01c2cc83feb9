import BetterSqlite3 from "better-sqlite3";
import { parentPort, workerData } from "worker_threads";

import { CheckpointWorkerData, FromCheckpointer, ToCheckpointer } from "./messages";

// Runs in a thread of its own with its own connection: a checkpoint copies the WAL into the
// database file and fsyncs it, work that would otherwise stall the node's event loop in a commit.
const { file, intervalMs, busyIntervalMs } = workerData as CheckpointWorkerData;
const port = parentPort;
const db = new BetterSqlite3(file);
db.pragma("busy_timeout = 5000");

const say = (message: FromCheckpointer): void => port?.postMessage(message);

// After a failed checkpoint (a full disk), the next comes soon: space freed on the disk must go to
// the checkpoint, which lets the log be reused, before the writers' log grows into all of it (then
// the checkpoint, which needs room to grow the database file, could never run again).
const RETRY_AFTER_FAILURE_MS = 50;
let failing = false;
let lastLogFrames = -1;

/** "written" when the log had changed since the last checkpoint: writers are at work. */
const checkpoint = (): "written" | "quiet" | "failed" => {
    try {
        const [result] = db.pragma("wal_checkpoint(PASSIVE)") as Array<{ log: number }>;
        failing = false;
        const frames = result?.log ?? 0;
        const written = frames !== lastLogFrames;
        lastLogFrames = frames;
        return written ? "written" : "quiet";
    } catch (error) {
        if (!failing) {
            say({ kind: "failed", reason: String(error) });
        }
        failing = true;
        return "failed";
    }
};

// While the log grows, small checkpoints often: each copies little and waits for a short fsync,
// and the delivery engine, which checkpoints itself only past a large log where the disk has room
// (see fitEngineLogToDisk), seldom has to. Once quiet, one look per interval.
const nextDelay = { written: busyIntervalMs, quiet: intervalMs, failed: Math.min(intervalMs, RETRY_AFTER_FAILURE_MS) };

let timer: NodeJS.Timeout;
const schedule = (delayMs: number): void => {
    timer = setTimeout(() => schedule(nextDelay[checkpoint()]), delayMs);
};
// The first look comes soon: a start often follows a run that left a log.
schedule(busyIntervalMs);

port?.on("message", (message: ToCheckpointer) => {
    if (message.kind === "stop") {
        clearTimeout(timer);
        checkpoint();
        db.close();
        port.close();
    }
});
