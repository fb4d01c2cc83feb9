const waiting: (() => void)[] = [];
let turnScheduled = false;

const resumeOne = (): void => {
    turnScheduled = false;
    waiting.shift()?.();
    if (waiting.length > 0) {
        turnScheduled = true;
        setImmediate(resumeOne);
    }
};

/**
 * Gives the event loop a turn: timers, I/O and other requests run before the work goes on. Work
 * that yields resumes one slice per turn of the loop, so that five sorts at once still hold it
 * for one slice at a time, not five.
 */
export const yieldToEventLoop = (): Promise<void> =>
    new Promise((resume) => {
        waiting.push(resume);
        if (!turnScheduled) {
            turnScheduled = true;
            setImmediate(resumeOne);
        }
    });

/**
 * Gives the event loop a whole turn, its timers included. An immediate runs right after the I/O of
 * its turn, so a slice that yields with one after a burst of requests holds the loop with them;
 * this one runs in the next turn's timers. It costs a millisecond at least: for a job's first slice.
 */
export const yieldPastTimers = (): Promise<void> => new Promise((resume) => setTimeout(resume, 0));

/** How long one slice of work may hold the event loop, in milliseconds. */
export const SLICE_MS = 4;

/**
 * Runs `step` over 0..count-1, yielding whenever a slice has run SLICE_MS; the clock is read every
 * `stepsPerCheck` steps (1 for heavy steps, such as sorting a run).
 */
export const forEachSliced = async (
    count: number,
    step: (index: number) => void,
    stepsPerCheck = 256,
): Promise<void> => {
    let sliceStart = performance.now();
    for (let index = 0; index < count; index++) {
        step(index);
        if ((index + 1) % stepsPerCheck === 0 && performance.now() - sliceStart > SLICE_MS) {
            await yieldToEventLoop();
            sliceStart = performance.now();
        }
    }
};

/**
 * Takes up to `count` items of `iterator` through `step`; true when it has no more. The loop of
 * forOfSliced, in a function of its own for the reason given at PositionSort.
 */
export const stepSome = <T>(iterator: Iterator<T>, step: (item: T) => void, count: number): boolean => {
    for (let taken = 0; taken < count; taken++) {
        const next = iterator.next();
        if (next.done) {
            return true;
        }
        step(next.value);
    }
    return false;
};

/** Runs `step` over an iterable without copying it, yielding whenever a slice has run SLICE_MS. */
export const forOfSliced = async <T>(items: Iterable<T>, step: (item: T) => void): Promise<void> => {
    const iterator = items[Symbol.iterator]();
    let sliceStart = performance.now();
    while (!stepSome(iterator, step, 256)) {
        if (performance.now() - sliceStart > SLICE_MS) {
            await yieldToEventLoop();
            sliceStart = performance.now();
        }
    }
};

const RUN = 256;
// Elements merged between two readings of the clock.
const MERGE_STEPS = 256;

type Compare = (left: number, right: number) => number;

/** Where the merging stands: runs of `width` merged from `source` into `target`, pair by pair. */
interface Merging {
    source: Int32Array;
    target: Int32Array;
    width: number;
    /** The first position of the pair being merged. */
    left: number;
    /** The next of each run of the pair, and the next place in `target`; k is -1 between pairs. */
    i: number;
    j: number;
    k: number;
}

/**
 * One sort of positions, done a slice at a time by `sortUntil`: runs of RUN sorted by the engine's
 * (stable) sort, then merged pairwise, from one typed array to the other and back. Its loops are in
 * methods called once per slice (the merge's inner one in mergeSome, every MERGE_STEPS elements),
 * not in the async function that awaits between slices: that function, one per sort and hot only
 * through its loops, was compiled by V8's optimizing compiler again and again as each phase and each
 * order came (eight compiles, some 300 ms of V8's helper threads, which run at the node's priority,
 * in the first listing of five orders at 100,000 wallets; `node --trace-opt`).
 */
class PositionSort {
    private runsSorted = 0;
    private merging: Merging;

    public constructor(
        private readonly count: number,
        private readonly compare: Compare,
        [first, second]: [Int32Array, Int32Array],
    ) {
        const [source, target] = [first.subarray(0, count), second.subarray(0, count)];
        this.merging = { source, target, width: RUN, left: 0, i: 0, j: 0, k: -1 };
    }

    /** The positions sorted, once `sortUntil` said so. */
    public get sorted(): Int32Array {
        return this.merging.source;
    }

    /** Sorts on until done (true) or until `performance.now()` passes `until` (false: call again). */
    public sortUntil(until: number): boolean {
        return this.sortRunsUntil(until) && this.mergeUntil(until);
    }

    private sortRunsUntil(until: number): boolean {
        const runs = Math.ceil(this.count / RUN);
        while (this.runsSorted < runs) {
            const start = this.runsSorted * RUN;
            const positions: number[] = [];
            for (let position = start; position < Math.min(start + RUN, this.count); position++) {
                positions.push(position);
            }
            this.merging.source.set(positions.sort(this.compare), start);
            this.runsSorted++;
            if (this.runsSorted < runs && performance.now() > until) {
                return false;
            }
        }
        return true;
    }

    private mergeUntil(until: number): boolean {
        const merging = this.merging;
        const count = this.count;
        while (merging.width < count) {
            while (merging.left < count) {
                const middle = Math.min(merging.left + merging.width, count);
                const end = Math.min(merging.left + 2 * merging.width, count);
                if (merging.k === -1) {
                    merging.i = merging.left;
                    merging.j = middle;
                    merging.k = merging.left;
                }
                if (!mergeSome(merging, this.compare, middle, end)) {
                    if (performance.now() > until) {
                        return false;
                    }
                    continue;
                }
                const { source, target } = merging;
                target.set(source.subarray(merging.i, middle), merging.k);
                merging.k += middle - merging.i;
                target.set(source.subarray(merging.j, end), merging.k);
                merging.k = -1;
                merging.left += 2 * merging.width;
            }
            [merging.source, merging.target] = [merging.target, merging.source];
            merging.width *= 2;
            merging.left = 0;
        }
        return true;
    }
}

/**
 * Merges the pair of runs `merging` is at, the one up to `middle` and the other up to `end`, for at
 * most MERGE_STEPS elements; true when one of them is used up. Every path of it runs on every call,
 * so V8 compiles it once with all the feedback it needs (see PositionSort).
 */
const mergeSome = (merging: Merging, compare: Compare, middle: number, end: number): boolean => {
    const { source, target } = merging;
    let { i, j, k } = merging;
    const stop = k + MERGE_STEPS;
    while (i < middle && j < end && k < stop) {
        target[k++] = compare(source[j], source[i]) < 0 ? source[j++] : source[i++];
    }
    merging.i = i;
    merging.j = j;
    merging.k = k;
    return i === middle || j === end;
};

/**
 * Sorts the positions 0..count-1 by `compare`, stably, without holding the event loop for more
 * than a slice (the clock is read after each run of 256 and every 256 merged elements). Positions
 * live in the typed arrays given (each of at least `count`), back and forth between them: a growing
 * array of a million would be copied whole, in one go, each time it grew. The answer is a view of
 * one of them, valid until they are sorted in again.
 */
export const sortPositionsSliced = async (
    count: number,
    compare: Compare,
    scratch: [Int32Array, Int32Array],
): Promise<Int32Array> => {
    const sort = new PositionSort(count, compare, scratch);
    while (!sort.sortUntil(performance.now() + SLICE_MS)) {
        await yieldToEventLoop();
    }
    return sort.sorted;
};
