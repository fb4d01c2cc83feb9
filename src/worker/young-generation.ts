import { setFlagsFromString } from "v8";
import { Worker } from "worker_threads";

const FLAG = "--min-semi-space-size";

/** The node's own floor for V8's young generation (its command line or NODE_OPTIONS), in MB; 0: V8's default. */
const nodesFloorMb = (): number => {
    const options = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)];
    for (const option of options.reverse()) {
        const match = /^--min[-_]semi[-_]space[-_]size=(\d+)$/.exec(option);
        if (match) {
            return Number(match[1]);
        }
    }
    return 0;
};

/**
 * Starts a worker whose heap's young generation never shrinks below `floorMb` megabytes.
 *
 * V8 sizes a young generation by what survives it and shrinks it back to its floor (1 MB) when the
 * isolate allocates little for a few seconds. A thread that answers many small requests after an
 * idle spell then collects its young generation every megabyte: the wallet thread at a million
 * wallets did 15-20 scavenges a second, each 2-5 ms, their parallel tasks on V8's helper threads,
 * which the node's isolate shares. Node offers no initial young generation size per worker; V8
 * reads this flag when it creates an isolate, so it is set for the worker's creation only and set
 * back to the node's own value once the worker runs (its `online` event) or fails to start. A
 * worker the node starts in that moment gets the floor too: more memory, nothing worse.
 */
export const withYoungGenerationFloor = (floorMb: number, start: () => Worker): Worker => {
    const nodes = nodesFloorMb();
    if (floorMb <= nodes) {
        return start();
    }
    setFlagsFromString(`${FLAG}=${floorMb}`);
    let worker: Worker;
    try {
        worker = start();
    } catch (error) {
        setFlagsFromString(`${FLAG}=${nodes}`);
        throw error;
    }
    const restore = (): void => {
        worker.off("online", restore).off("exit", restore);
        setFlagsFromString(`${FLAG}=${nodes}`);
    };
    worker.once("online", restore).once("exit", restore);
    return worker;
};
