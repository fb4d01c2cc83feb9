import { setFlagsFromString } from "v8";
import { Worker } from "worker_threads";

/** How a thread's heap is to differ from V8's defaults (see withThreadHeap). */
export interface ThreadHeap {
    /** The least its young generation shrinks to, in MB. */
    youngGenerationFloorMb?: number;
    /** false: no memory reducer (see withThreadHeap). */
    memoryReducer?: boolean;
    /** How large its old generation may grow before its first full collection, in MB. */
    initialOldGenerationMb?: number;
}

/** The node's own value of a V8 flag, from its command line or NODE_OPTIONS, last one wins. */
const nodesFlag = (name: string): string | undefined => {
    const pattern = name.replace(/-/g, "[-_]");
    const options = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].reverse();
    for (const option of options) {
        const match = new RegExp(`^--(no-)?${pattern}(?:=(\\S+))?$`).exec(option);
        if (match) {
            return match[1] ? "false" : (match[2] ?? "true");
        }
    }
    return undefined;
};

const asFlag = (name: string, value: string): string =>
    value === "true" ? `--${name}` : value === "false" ? `--no-${name}` : `--${name}=${value}`;

/**
 * Starts a worker whose heap is set up as `heap` says. V8 reads these flags when it creates an
 * isolate and Node offers no per-worker setting for them, so they are set for the worker's creation
 * only and set back to the node's own values once the worker runs (its `online` event) or fails to
 * start. A worker the node starts in that moment gets them too: more memory, nothing worse.
 *
 * The young generation floor: V8 sizes a young generation by what survives it and shrinks it back
 * to its floor (1 MB) when the isolate allocates little for a few seconds. A thread that answers
 * many small requests after an idle spell then collects it every megabyte: the wallet thread at a
 * million wallets did 15-20 scavenges a second, each 2-5 ms, their parallel tasks on V8's helper
 * threads, which the node's isolate shares.
 *
 * The memory reducer: when an isolate turns idle, V8 marks and compacts its whole heap to give
 * memory back. A thread whose heap is nearly all live data (the wallet lists: 0.8 GB at a million
 * wallets, of which such a collection freed 1-3%) pays some 0.6 s of marking for it each time,
 * on those same helper threads, at the node's priority.
 *
 * The initial old generation: a heap that grows from nothing to what it will hold (the wallet lists:
 * half a gigabyte at a million wallets, built in some 20 s) is fully collected each time it doubles
 * or so, each time marking all it holds so far on those helper threads; sized for what it is about
 * to hold, it is collected far fewer times on the way (none in a first listing at a million wallets
 * on Node 20).
 */
export const withThreadHeap = (heap: ThreadHeap, start: () => Worker): Worker => {
    const flags: Array<{ name: string; forWorker: string; nodes: string }> = [];
    if (heap.youngGenerationFloorMb !== undefined) {
        const nodes = Number(nodesFlag("min-semi-space-size") ?? 0);
        if (heap.youngGenerationFloorMb > nodes) {
            flags.push({
                name: "min-semi-space-size",
                forWorker: String(heap.youngGenerationFloorMb),
                nodes: String(nodes),
            });
        }
    }
    if (heap.initialOldGenerationMb !== undefined) {
        const nodes = Number(nodesFlag("initial-old-space-size") ?? 0);
        if (heap.initialOldGenerationMb > nodes) {
            flags.push({
                name: "initial-old-space-size",
                forWorker: String(Math.ceil(heap.initialOldGenerationMb)),
                nodes: String(nodes),
            });
        }
    }
    if (heap.memoryReducer === false) {
        flags.push({ name: "memory-reducer", forWorker: "false", nodes: nodesFlag("memory-reducer") ?? "true" });
    }
    if (flags.length === 0) {
        return start();
    }
    const setForWorker = (): void => flags.forEach((flag) => setFlagsFromString(asFlag(flag.name, flag.forWorker)));
    const setBack = (): void => flags.forEach((flag) => setFlagsFromString(asFlag(flag.name, flag.nodes)));
    setForWorker();
    let worker: Worker;
    try {
        worker = start();
    } catch (error) {
        setBack();
        throw error;
    }
    const started = (): void => {
        worker.off("online", started).off("exit", started);
        setBack();
    };
    worker.once("online", started).once("exit", started);
    return worker;
};
