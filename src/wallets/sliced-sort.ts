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

/** Runs `step` over an iterable without copying it, yielding whenever a slice has run SLICE_MS. */
export const forOfSliced = async <T>(items: Iterable<T>, step: (item: T) => void): Promise<void> => {
    let sliceStart = performance.now();
    let count = 0;
    for (const item of items) {
        step(item);
        if ((++count & 255) === 0 && performance.now() - sliceStart > SLICE_MS) {
            await yieldToEventLoop();
            sliceStart = performance.now();
        }
    }
};

const RUN = 256;

/**
 * Sorts the positions 0..count-1 by `compare`, stably, without holding the event loop for more
 * than a slice: runs of 256 sorted by the engine's (stable) sort, then merged pairwise, checking
 * the clock every 256 elements. Positions live in the typed arrays given (each of at least `count`),
 * back and forth between them: a growing array of a million would be copied whole, in one go, each
 * time it grew. The answer is a view of one of them, valid until they are sorted in again.
 */
export const sortPositionsSliced = async (
    count: number,
    compare: (left: number, right: number) => number,
    [first, second]: [Int32Array, Int32Array],
): Promise<Int32Array> => {
    let source = first.subarray(0, count);
    await forEachSliced(
        Math.ceil(count / RUN),
        (run) => {
            const start = run * RUN;
            const positions: number[] = [];
            for (let position = start; position < Math.min(start + RUN, count); position++) {
                positions.push(position);
            }
            source.set(positions.sort(compare), start);
        },
        1,
    );
    let target = second.subarray(0, count);
    for (let width = RUN; width < count; width *= 2) {
        let sliceStart = performance.now();
        for (let left = 0; left < count; left += 2 * width) {
            const middle = Math.min(left + width, count);
            const end = Math.min(left + 2 * width, count);
            let [i, j, k] = [left, middle, left];
            while (i < middle && j < end) {
                target[k++] = compare(source[j], source[i]) < 0 ? source[j++] : source[i++];
                if ((k & 255) === 0 && performance.now() - sliceStart > SLICE_MS) {
                    await yieldToEventLoop();
                    sliceStart = performance.now();
                }
            }
            target.set(source.subarray(i, middle), k);
            k += middle - i;
            target.set(source.subarray(j, end), k);
        }
        [source, target] = [target, source];
    }
    return source;
};
