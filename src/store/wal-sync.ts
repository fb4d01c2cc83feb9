import { FileHandle, open } from "fs/promises";

/**
 * Makes the register's committed writes durable without blocking the node's thread: its
 * connection commits with `synchronous = NORMAL` (the log is written, not flushed), and this
 * flushes the log file with fdatasync on libuv's thread pool before a write is answered. With
 * `FULL` SQLite flushed it inside the commit, on the node's thread: 10 writers at once held the
 * node's loop 94-98 ms. A flush covers every commit before it, so writes answered together share one.
 */
export class WalSync {
    private handle: Promise<FileHandle> | undefined;
    private readonly underWay = new Set<Promise<void>>();

    public constructor(private readonly databaseFile: string) {}

    /** Resolves once every commit made before the call is on disk. */
    public sync(): Promise<void> {
        const flushed = this.flush();
        this.underWay.add(flushed);
        const forget = (): void => void this.underWay.delete(flushed);
        flushed.then(forget, forget);
        return flushed;
    }

    /** Waits for the flushes under way, then closes the log file's handle. */
    public async close(): Promise<void> {
        await Promise.allSettled([...this.underWay]);
        const handle = this.handle;
        this.handle = undefined;
        await (await handle?.catch(() => undefined))?.close().catch(() => undefined);
    }

    private async flush(): Promise<void> {
        // The log file is the database's as long as a connection holds it open (the plugin's do).
        this.handle ??= open(`${this.databaseFile}-wal`, "r+");
        const handle = this.handle;
        try {
            await (await handle).datasync();
        } catch (error) {
            // Opened again next time: the file may have been replaced (see the checkpoint thread).
            if (this.handle === handle) {
                this.handle = undefined;
                void handle.then((opened) => opened.close()).catch(() => undefined);
            }
            throw error;
        }
    }
}
