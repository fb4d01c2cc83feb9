import { Collection } from "./collections";
import { KernelFigures, procFigures } from "./kernel-figures";

/** A gap between two ticks of a 1 ms timer on this thread, and what the thread did in it. */
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
    /**
     * Of its time on a CPU, the part in the kernel (system calls, page faults), in the kernel's
     * 10 ms steps over the gap and up to 5 ms before it; and the page faults it took there.
     */
    inKernelMs?: number;
    pageFaults?: number;
    /**
     * Time the hypervisor took from the CPU the thread was on (the kernel's steal, in 10 ms steps,
     * over the gap and a few ms either side); undefined off Linux.
     */
    stolenMs?: number;
}

/** The longest stall, and the longest in which the machine did not stand still: the process's own. */
export interface Stalls {
    longest?: Stall;
    longestOwn?: Stall;
}

const lengthOf = (stall: Stall | undefined): number => (stall ? stall.end - stall.begin : 0);

/**
 * A stall in which the hypervisor held the thread's CPU for half of it or more: the virtual
 * machine stood still (a 53 ms one under perf had no sample from any thread of the process tree,
 * both CPUs at once), which no code of the process caused.
 */
export const isMachinePause = (stall: Stall): boolean =>
    stall.stolenMs !== undefined && stall.stolenMs >= lengthOf(stall) / 2;

// The steal of a pause is accounted by each CPU's next scheduler tick after it: a stall's is read
// this long after its end. Between stalls it is read at most this often (one read costs ~15 µs).
const STEAL_SETTLE_MS = 30;
const STEAL_READ_MS = 5;

/** A stall waiting for the steal after it. */
interface Unsettled extends Stall {
    cpus: number[];
    stealBefore?: number[];
    settlesAt: number;
}

/**
 * Watches the node's thread for its longest stall and takes it apart: a stall is the thread
 * collecting garbage, running code, waiting for a CPU (a 2-core machine also runs the clients, the
 * wallet thread and V8's helper threads), sleeping (a collection waiting for a helper thread, or
 * the kernel), or the whole virtual machine standing still. monitorEventLoopDelay gives the figure
 * the issue names; this tells what made it, and the longest stall of the process's own making.
 */
export class StallAnatomy {
    private timer: NodeJS.Timeout | undefined;
    private figures: KernelFigures | undefined;
    private stalls: Stalls = {};
    private unsettled: Unsettled[] = [];

    public constructor(private readonly openFigures: () => KernelFigures = procFigures) {}

    public start(): void {
        this.stop();
        this.stalls = {};
        this.unsettled = [];
        const figures = this.openFigures();
        this.figures = figures;
        let last = performance.now();
        let [lastOnCpu, lastRunQueue] = figures.schedstat() ?? [];
        let lastSteal = figures.steal();
        let lastThread = figures.thread();
        let stealReadAt = last;
        this.timer = setInterval(() => {
            const now = performance.now();
            const [onCpu, runQueue] = figures.schedstat() ?? [];
            const gap = now - last;
            if (gap > lengthOf(this.stalls.longestOwn)) {
                // A candidate for the longest of the process's own; the longest overall is one too.
                const thread = figures.thread();
                const stall: Stall = {
                    begin: last,
                    end: now,
                    onCpuMs: onCpu === undefined || lastOnCpu === undefined ? undefined : onCpu - lastOnCpu,
                    runQueueMs:
                        runQueue === undefined || lastRunQueue === undefined ? undefined : runQueue - lastRunQueue,
                    inKernelMs:
                        thread === undefined || lastThread === undefined
                            ? undefined
                            : thread.kernelMs - lastThread.kernelMs,
                    pageFaults:
                        thread === undefined || lastThread === undefined
                            ? undefined
                            : thread.pageFaults - lastThread.pageFaults,
                };
                if (gap > lengthOf(this.stalls.longest)) {
                    this.stalls.longest = stall;
                }
                this.unsettled.push({
                    ...stall,
                    cpus: [lastThread?.cpu, thread?.cpu].filter((cpu): cpu is number => cpu !== undefined),
                    stealBefore: lastSteal,
                    settlesAt: now + STEAL_SETTLE_MS,
                });
            }
            if (now - stealReadAt >= STEAL_READ_MS) {
                lastSteal = figures.steal();
                lastThread = figures.thread();
                stealReadAt = now;
                this.settle(now, lastSteal);
            }
            last = now;
            [lastOnCpu, lastRunQueue] = [onCpu, runQueue];
        }, 1).unref(); // a window that throws before stop() must not keep the bench alive
    }

    /** Stops watching (again: a no-op); the stalls seen since start() are kept for longest(). */
    public stop(): void {
        clearInterval(this.timer);
        this.timer = undefined;
        this.figures?.close();
        this.figures = undefined;
    }

    /** Stops watching and, once the steal of the last stalls is accounted, the stalls seen since start(). */
    public async longest(): Promise<Stalls> {
        this.stop();
        if (this.unsettled.length > 0) {
            const settlesAt = Math.max(...this.unsettled.map(({ settlesAt }) => settlesAt));
            await new Promise((resolve) => setTimeout(resolve, Math.max(0, settlesAt - performance.now())));
            const figures = this.openFigures();
            try {
                this.settle(Number.POSITIVE_INFINITY, figures.steal());
            } finally {
                figures.close();
            }
        }
        return this.stalls;
    }

    /** Gives the stalls whose steal is accounted by now their stolen time, and keeps the longest own one. */
    private settle(now: number, steal: number[] | undefined): void {
        const settling = this.unsettled.filter(({ settlesAt }) => settlesAt <= now);
        this.unsettled = this.unsettled.filter(({ settlesAt }) => settlesAt > now);
        for (const { begin, end, onCpuMs, runQueueMs, inKernelMs, pageFaults, cpus, stealBefore } of settling) {
            const stolenMs =
                steal === undefined || stealBefore === undefined || cpus.length === 0
                    ? undefined
                    : Math.max(...cpus.map((cpu) => (steal[cpu] ?? 0) - (stealBefore[cpu] ?? 0)));
            const settled: Stall = { begin, end, onCpuMs, runQueueMs, inKernelMs, pageFaults, stolenMs };
            if (this.stalls.longest?.begin === settled.begin) {
                this.stalls.longest = settled;
            }
            if (!isMachinePause(settled) && lengthOf(settled) > lengthOf(this.stalls.longestOwn)) {
                this.stalls.longestOwn = settled;
            }
        }
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
    if (stall.inKernelMs !== undefined && stall.pageFaults !== undefined) {
        parts.push(`in the kernel ${stall.inKernelMs.toFixed(0)} (${stall.pageFaults} page faults)`);
    }
    if (stall.stolenMs !== undefined && stall.stolenMs > 0) {
        parts.push(`taken by the hypervisor ${stall.stolenMs.toFixed(0)}`);
    }
    const length = `${lengthOf(stall).toFixed(1)} ms: `;
    return `${length}${isMachinePause(stall) ? "the machine stood still (" : ""}${parts.join(", ")}${isMachinePause(stall) ? ")" : ""}`;
};

/**
 * The longest stall taken apart and, when the machine stood still in it, the longest of the
 * process's own: "53.2 ms: the machine stood still (...); the longest besides, 11.3 ms: ...".
 */
export const describeStalls = (
    { longest, longestOwn }: Stalls,
    collections: readonly Collection[],
    blocks: readonly Span[] = [],
): string => {
    const text = describeStall(longest, collections, blocks);
    if (!longest || !isMachinePause(longest)) {
        return text;
    }
    return `${text}; the longest besides, ${describeStall(longestOwn, collections, blocks)}`;
};

/** The longest stall the process caused: the longest, or the longest besides when the machine stood still in it. */
export const ownStall = ({ longest, longestOwn }: Stalls): Stall | undefined =>
    longest && isMachinePause(longest) ? longestOwn : longest;
