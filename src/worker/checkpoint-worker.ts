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

const checkpoint = (): void => {
    try {
        db.pragma("wal_checkpoint(PASSIVE)");
    } catch (error) {
        say({ kind: "failed", reason: String(error) });
    }
};

const timer = setInterval(checkpoint, intervalMs);

port?.on("message", (message: ToCheckpointer) => {
    if (message.kind === "stop") {
        clearInterval(timer);
        checkpoint();
        db.close();
        port.close();
    }
});
