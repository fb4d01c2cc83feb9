import { readFileSync, rmSync, unlinkSync, writeFileSync } from "fs";
import { resolve } from "path";

import { describeProcess, isAlive } from "./processes";

export const LOCK_FILE = "local-node.pid";

/** A second start on a data folder whose node is alive: nothing of that node may be touched. */
export class DataDirInUseError extends Error {}

export interface DataDirLock {
    release(): void;
}

const holderOf = (lockFile: string): number | undefined => {
    try {
        const pid = Number(readFileSync(lockFile, "utf8").trim());
        return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    } catch {
        return undefined;
    }
};

/** A node's pid that another process now has would keep the folder locked for good: it must be a Node process. */
const isLocalNode = (pid: number): boolean => pid !== process.pid && isAlive(pid) && /node/.test(describeProcess(pid));

/**
 * Claims the data folder for this process before anything in it is read, stopped or deleted; the
 * folder's lock file names the node that holds it. A lock whose node is gone (SIGKILL) is taken over.
 */
export const claimDataDir = (dataDir: string): DataDirLock => {
    const lockFile = resolve(dataDir, LOCK_FILE);
    for (let attempt = 0; attempt < 2; attempt++) {
        try {
            writeFileSync(lockFile, `${process.pid}\n`, { flag: "wx", mode: 0o644 });
            return {
                release: () => {
                    if (holderOf(lockFile) === process.pid) {
                        rmSync(lockFile, { force: true });
                    }
                },
            };
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
                throw error;
            }
        }
        const holder = holderOf(lockFile);
        if (holder !== undefined && isLocalNode(holder)) {
            throw new DataDirInUseError(
                `${dataDir} is in use by the local node pid ${holder}: stop it (kill ${holder}) or choose another LOCAL_NODE_DATA_DIR`,
            );
        }
        unlinkSync(lockFile);
    }
    throw new DataDirInUseError(`${dataDir}: another start claimed it at the same moment`);
};
