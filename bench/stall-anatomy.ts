import { closeSync, openSync, readSync } from "fs";

import { Collection } from "./collections";

/** The longest gap between two ticks of a 1 ms timer on this thread, and what the thread did in it. */
export interface Stall {
    begin: number;
    end: number;
    /**
     * Time this thread ran on a CPU within the gap (the kernel's schedstat, which brings a running
     * thread's figure up to date at each scheduler tick: exact to a few ms); undefined off Linux.
     */
    onCpuMs?: number;
    /** Time it was ready to run but waited for a CPU. */
    runQueueMs?: number;
}

/** The kernel's per-thread figures, in ms: time on a CPU, time waiting in a run queue. */
const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;

/**
 * Watches the node's thread for its longest stall and takes it apart: a stall is the thread
 * collecting garbage, running code, waiting for a CPU (a 2-core machine also runs the clients, the
 * wallet thread and V8's helper threads), or sleeping (a collection waiting for a helper thread, or
 * the kernel). monitorEventLoopDelay gives the figure the issue names; this tells what made it.
 */
export class StallAnatomy {
    private timer: NodeJS.Timeout | undefined;
    private schedstat: number | undefined;
    private readonly buffer = Buffer.alloc(128);
    private longest: Stall | undefined;

    public start(): void {
        this.longest = undefined;
        try {
            this.schedstat = openSync(SCHEDSTAT, "r");
        } catch {
            this.schedstat = undefined; // not Linux: the stall is still timed
        }
        let last = performance.now();
        let [lastOnCpu, lastRunQueue] = this.readSchedstat();
        this.timer = setInterval(() => {
            const now = performance.now();
            const [onCpu, runQueue] = this.readSchedstat();
            if (!this.longest || now - last > this.longest.end - this.longest.begin) {
                this.longest = {
                    begin: last,
                    end: now,
                    onCpuMs: onCpu === undefined || lastOnCpu === undefined ? undefined : onCpu - lastOnCpu,
                    runQueueMs:
                        runQueue === undefined || lastRunQueue === undefined ? undefined : runQueue - lastRunQueue,
                };
            }
            last = now;
            [lastOnCpu, lastRunQueue] = [onCpu, runQueue];
        }, 1).unref(); // a window that throws before stop() must not keep the bench alive
    }

    /** Stops watching; the longest stall seen since start(). */
    public stop(): Stall | undefined {
        clearInterval(this.timer);
        if (this.schedstat !== undefined) {
            closeSync(this.schedstat);
            this.schedstat = undefined;
        }
        return this.longest;
    }

    private readSchedstat(): [number | undefined, number | undefined] {
        if (this.schedstat === undefined) {
            return [undefined, undefined];
        }
        const length = readSync(this.schedstat, this.buffer, 0, this.buffer.length, 0);
        const [onCpuNs, runQueueNs] = this.buffer.toString("latin1", 0, length).split(" ").map(Number);
        return [onCpuNs / 1e6, runQueueNs / 1e6];
    }
}

/** A span of performance.now() times. */
export interface Span {
    begin: number;
    end: number;
}

const overlapping = <Spanned extends Span>(spans: readonly Spanned[], stall: Stall): Spanned[] =>
    spans.filter(({ begin, end }) => end > stall.begin && begin < stall.end);

const overlap = (spans: readonly Span[], stall: Stall): number =>
    spans.reduce((total, { begin, end }) => total + Math.min(end, stall.end) - Math.max(begin, stall.begin), 0);

/**
 * "24.8 ms: collections 24.5 (major), on a CPU 24.6, waiting for one 0.1", from the collections seen;
 * with "the bench's block 3.2" where the bench applied a block within it (its own work, as the node's
 * block processing would be, not the routes').
 */
export const describeStall = (
    stall: Stall | undefined,
    collections: readonly Collection[],
    blocks: readonly Span[] = [],
): string => {
    if (!stall) {
        return "none";
    }
    const within = overlapping(collections, stall);
    const kinds = [...new Set(within.map(({ major }) => (major ? "major" : "young")))].join(" and ");
    const parts = [`collections ${overlap(within, stall).toFixed(1)}${kinds ? ` (${kinds})` : ""}`];
    const blocksWithin = overlapping(blocks, stall);
    if (blocksWithin.length > 0) {
        parts.push(`the bench's block ${overlap(blocksWithin, stall).toFixed(1)}`);
    }
    if (stall.onCpuMs !== undefined && stall.runQueueMs !== undefined) {
        parts.push(`on a CPU ${stall.onCpuMs.toFixed(1)}`, `waiting for one ${stall.runQueueMs.toFixed(1)}`);
    }
    return `${(stall.end - stall.begin).toFixed(1)} ms: ${parts.join(", ")}`;
};
