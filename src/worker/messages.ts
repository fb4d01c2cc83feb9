/** What the plugin's threads say to each other; both sides import these types. */

/** Given to the checkpoint thread when it starts. */
export interface CheckpointWorkerData {
    file: string;
    intervalMs: number;
}

/** From the plugin to the checkpoint thread. */
export type ToCheckpointer = { kind: "stop" };

/** From the checkpoint thread to the plugin. */
export type FromCheckpointer = { kind: "failed"; reason: string } | { kind: "file-gone"; reason: string };
