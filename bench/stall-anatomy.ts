import { Collection } from "./collections";
import { CpuTimes, KernelFigures, procFigures } from "./kernel-figures";

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
    /**
     * Time of the gap and the few ms before it that the thread's CPU was accounted neither work nor
     * idleness nor steal (10 ms steps): its scheduler tick did not come, the virtual CPU was not
     * running. Where the thread changed CPUs, the least of the two; undefined off Linux.
     */
    untickedMs?: number;
}

/** The longest stall, and the longest in which the machine did not stand still: the process's own. */
export interface Stalls {
    longest?: Stall;
    longestOwn?: Stall;
}

const lengthOf = (stall: Stall | undefined): number => (stall ? stall.end - stall.begin : 0);

// A CPU's accounted time and steal come in 10 ms steps, read up to 5 ms before a stall (and the
// steal up to 30 ms after it): they count only beyond what those can make up. One step of steal
// made a 9.4 ms stall "the machine's" once.
const NOISE_MS = 20;

/**
 * A stall in which the thread's CPU did not run for half of it or more (and 20 ms at least, beyond
 * the figures' steps): the hypervisor held it (steal), or the thread was "on" a CPU whose tick
 * never came. The virtual machine stood still,
 * which no code of the process caused: a 53 ms one under perf had no sample from any thread of the
 * process tree, and schedstat counted it as time on a CPU.
 */
export const isMachinePause = (stall: Stall): boolean => {
    const half = lengthOf(stall) / 2;
    const beyondNoise = (ms: number | undefined): boolean => ms !== undefined && ms >= Math.max(half, NOISE_MS);
    const onCpu = stall.onCpuMs !== undefined && stall.onCpuMs >= half;
    return beyondNoise(stall.stolenMs) || (onCpu && beyondNoise(stall.untickedMs));
};

// The steal of a pause is accounted by each CPU's next scheduler tick after it: a stall's is read
// this long after its end. Between stalls the CPUs' times are read at most this often (one read
// of /proc/stat costs ~15 µs).
const STEAL_SETTLE_MS = 30;
const CPU_TIMES_READ_MS = 5;

/** A stall waiting for the steal after it. */
interface Unsettled extends Stall {
    cpus: number[];
    stealBefore?: number[];
    settlesAt: number;
}

/** All of a CPU's time the kernel has accounted: to work, to idleness, to the hypervisor. */
const accounted = ({ busyMs, idleMs, stolenMs }: CpuTimes): number => busyMs + idleMs + stolenMs;

const difference = <T>(after: T | undefined, before: T | undefined, of: (figures: T) => number): number | undefined =>
    after === undefined || before === undefined ? undefined : of(after) - of(before);

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
        let lastSchedstat = figures.schedstat();
        let lastCpus = figures.cpus();
        let lastThread = figures.thread();
        let cpusReadAt = last;
        this.timer = setInterval(() => {
            const now = performance.now();
            const schedstat = figures.schedstat();
            const gap = now - last;
            if (gap > lengthOf(this.stalls.longestOwn)) {
                // A candidate for the longest of the process's own; the longest overall is one too.
                const thread = figures.thread();
                const cpus = figures.cpus();
                const seenOn = [...new Set([lastThread?.cpu, thread?.cpu])].filter(
                    (seen): seen is number => seen !== undefined,
                );
                // Where the thread changed CPUs, the time both left unaccounted: a stop of either
                // alone is not told (the bench would rather count a pause as the process's own).
                const unaccounted = seenOn.map((cpu) => {
                    const accountedMs = difference(cpus?.[cpu], lastCpus?.[cpu], accounted);
                    return accountedMs === undefined ? undefined : now - cpusReadAt - accountedMs;
                });
                const stall: Stall = {
                    begin: last,
                    end: now,
                    onCpuMs: difference(schedstat, lastSchedstat, ([onCpu]) => onCpu),
                    runQueueMs: difference(schedstat, lastSchedstat, ([, runQueue]) => runQueue),
                    inKernelMs: difference(thread, lastThread, ({ kernelMs }) => kernelMs),
                    pageFaults: difference(thread, lastThread, ({ pageFaults }) => pageFaults),
                    untickedMs: unaccounted.some((ms) => ms === undefined)
                        ? undefined
                        : Math.min(...unaccounted.map((ms) => ms!)),
                };
                if (gap > lengthOf(this.stalls.longest)) {
                    this.stalls.longest = stall;
                }
                this.unsettled.push({
                    ...stall,
                    cpus: seenOn,
                    stealBefore: lastCpus?.map(({ stolenMs }) => stolenMs),
                    settlesAt: now + STEAL_SETTLE_MS,
                });
            }
            if (now - cpusReadAt >= CPU_TIMES_READ_MS) {
                lastCpus = figures.cpus();
                lastThread = figures.thread();
                cpusReadAt = now;
                this.settle(now, lastCpus);
            }
            last = now;
            lastSchedstat = schedstat;
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
                this.settle(Number.POSITIVE_INFINITY, figures.cpus());
            } finally {
                figures.close();
            }
        }
        return this.stalls;
    }

    /** Gives the stalls whose steal is accounted by now their stolen time, and keeps the longest own one. */
    private settle(now: number, cpus: CpuTimes[] | undefined): void {
        const settling = this.unsettled.filter(({ settlesAt }) => settlesAt <= now);
        this.unsettled = this.unsettled.filter(({ settlesAt }) => settlesAt > now);
        for (const unsettled of settling) {
            const { cpus: seenOn, stealBefore } = unsettled;
            const stolenMs =
                cpus === undefined || stealBefore === undefined || seenOn.length === 0
                    ? undefined
                    : Math.max(...seenOn.map((cpu) => (cpus[cpu]?.stolenMs ?? 0) - (stealBefore[cpu] ?? 0)));
            const settled: Stall = {
                begin: unsettled.begin,
                end: unsettled.end,
                onCpuMs: unsettled.onCpuMs,
                runQueueMs: unsettled.runQueueMs,
                inKernelMs: unsettled.inKernelMs,
                pageFaults: unsettled.pageFaults,
                untickedMs: unsettled.untickedMs,
                stolenMs,
            };
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
    if (stall.untickedMs !== undefined && stall.untickedMs >= NOISE_MS) {
        parts.push(`its CPU unaccounted ${stall.untickedMs.toFixed(0)}`);
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
