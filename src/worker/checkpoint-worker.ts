import BetterSqlite3 from "better-sqlite3";
import { statSync } from "fs";
import { parentPort, workerData } from "worker_threads";

import { CheckpointWorkerData, FromCheckpointer, ToCheckpointer } from "./messages";

// Runs in a thread of its own with its own connection: a checkpoint copies the WAL into the
// database file and fsyncs it, work that would otherwise stall the node's event loop in a commit.
const { file, intervalMs } = workerData as CheckpointWorkerData;
const port = parentPort;
const db = new BetterSqlite3(file);
db.pragma("busy_timeout = 5000");
// The file this run opened: deleted or replaced while in use, every write still goes to the old
// inode, and the next start would find another file or none.
const openedInode = statSync(file).ino;
let fileGoneSaid = false;

const say = (message: FromCheckpointer): void => port?.postMessage(message);

// After a failed checkpoint (a full disk), the next comes soon: space freed on the disk must go to
// the checkpoint, which lets the log be reused, before the writers' log grows into all of it (then
// the checkpoint, which needs room to grow the database file, could never run again).
const RETRY_AFTER_FAILURE_MS = 50;
let failing = false;

const checkFile = (): void => {
    if (fileGoneSaid) {
        return;
    }
    let reason: string | undefined;
    try {
        if (statSync(file).ino !== openedInode) {
            reason = `${file} was replaced by another file while in use`;
        }
    } catch (error) {
        reason = `${file} cannot be found any more (${(error as NodeJS.ErrnoException).code ?? String(error)}): it was deleted or moved while in use`;
    }
    if (reason !== undefined) {
        fileGoneSaid = true;
        say({ kind: "file-gone", reason });
    }
};

/** true when the log was checkpointed. */
const checkpoint = (): boolean => {
    checkFile();
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
