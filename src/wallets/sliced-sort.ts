/** Gives the event loop a turn: timers, I/O and other requests run before the work goes on. */
const yieldToEventLoop = (): Promise<void> => new Promise((resume) => setImmediate(resume));

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
 * A stable merge sort that never holds the event loop for more than a slice: runs of 256 sorted
 * with the engine's (stable) sort, then merged pairwise, checking the clock every 256 elements.
 */
export const sortSliced = async <T>(items: readonly T[], compare: (left: T, right: T) => number): Promise<T[]> => {
    let source: T[] = [];
    await forEachSliced(
        Math.ceil(items.length / RUN),
        (run) => {
            const sorted = items.slice(run * RUN, (run + 1) * RUN).sort(compare);
            for (const item of sorted) {
                source.push(item);
            }
        },
        1,
    );
    let target: T[] = new Array<T>(items.length);
    for (let width = RUN; width < items.length; width *= 2) {
        let sliceStart = performance.now();
        for (let left = 0; left < items.length; left += 2 * width) {
            const middle = Math.min(left + width, items.length);
            const end = Math.min(left + 2 * width, items.length);
            let [i, j, k] = [left, middle, left];
            while (i < middle && j < end) {
                target[k++] = compare(source[j], source[i]) < 0 ? source[j++] : source[i++];
                if ((k & 255) === 0 && performance.now() - sliceStart > SLICE_MS) {
                    await yieldToEventLoop();
                    sliceStart = performance.now();
                }
            }
            while (i < middle) target[k++] = source[i++];
            while (j < end) target[k++] = source[j++];
        }
        [source, target] = [target, source];
    }
    return source;
};
