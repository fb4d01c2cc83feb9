import BetterSqlite3 from "better-sqlite3";
import { parentPort, workerData } from "worker_threads";

import { CheckpointWorkerData, FromCheckpointer, ToCheckpointer } from "./messages";

// Runs in a thread of its own with its own connection: a checkpoint copies the WAL into the
// database file and fsyncs it, work that would otherwise stall the node's event loop in a commit.
const { file, intervalMs } = workerData as CheckpointWorkerData;
const port = parentPort;
const db = new BetterSqlite3(file);
db.pragma("busy_timeout = 5000");

const say = (message: FromCheckpointer): void => port?.postMessage(message);

// After a failed checkpoint (a full disk), the next comes soon: space freed on the disk must go to
// the checkpoint, which lets the log be reused, before the writers' log grows into all of it (then
// the checkpoint, which needs room to grow the database file, could never run again).
const RETRY_AFTER_FAILURE_MS = 50;
let failing = false;

/** true when the log was checkpointed. */
const checkpoint = (): boolean => {
    try {
        db.pragma("wal_checkpoint(PASSIVE)");
        failing = false;
        return true;
    } catch (error) {
        if (!failing) {
            say({ kind: "failed", reason: String(error) });
        }
        failing = true;
        return false;
    }
};

let timer: NodeJS.Timeout;
const schedule = (delayMs: number): void => {
    timer = setTimeout(
        () => schedule(checkpoint() ? intervalMs : Math.min(intervalMs, RETRY_AFTER_FAILURE_MS)),
        delayMs,
    );
};
schedule(intervalMs);

port?.on("message", (message: ToCheckpointer) => {
    if (message.kind === "stop") {
        clearTimeout(timer);
        checkpoint();
        db.close();
        port.close();
    }
});
