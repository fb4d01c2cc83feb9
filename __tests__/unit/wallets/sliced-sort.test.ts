import { readFile } from "fs";

import {
    forOfSliced,
    sortPositionsSliced,
    stepSome,
    yieldPastTimers,
    yieldToEventLoop,
} from "../../../src/wallets/sliced-sort";

/** Runs `work` as I/O's callback runs: in the loop's poll phase, as a request's handler does. */
const inIoCallback = (work: () => Promise<void>): Promise<void> =>
    new Promise((done, fail) => readFile(__filename, () => work().then(done, fail)));

describe("yielding the node's event loop", () => {
    it("resumes after an immediate before the turn's timers, and past them when asked to", async () => {
        const order: string[] = [];
        await inIoCallback(async () => {
            setTimeout(() => order.push("a timer due"), 0);
            await yieldToEventLoop();
            order.push("after an immediate");
            await yieldPastTimers();
            order.push("past the timers");
        });

        expect(order).toEqual(["after an immediate", "a timer due", "past the timers"]);
    });

    it("resumes work yielding at once one slice per turn, in the order it yielded", async () => {
        const order: string[] = [];
        const work = async (name: string): Promise<void> => {
            for (let slice = 0; slice < 3; slice++) {
                order.push(`${name}${slice}`);
                await yieldToEventLoop();
            }
        };
        await Promise.all([work("a"), work("b")]);

        expect(order).toEqual(["a0", "b0", "a1", "b1", "a2", "b2"]);
    });
});

/** Keeps the CPU busy for `ms`: a step of work that cannot be done faster than that. */
const spin = (ms: number): void => {
    const until = performance.now() + ms;
    while (performance.now() < until) {
        // busy
    }
};

/** Counts the turns of the event loop taken while `work` runs. */
const turnsDuring = async <T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> => {
    let turns = 0;
    let running = true;
    const tick = (): void => {
        if (running) {
            turns++;
            setImmediate(tick);
        }
    };
    setImmediate(tick);
    const result = await work();
    running = false;
    return { result, turns };
};

/** Positions 0..count-1 of `keys` in the order a stable sort by key gives. */
const stableOrder = (keys: number[]): number[] =>
    keys
        .map((key, position) => ({ key, position }))
        .sort((a, b) => a.key - b.key || a.position - b.position)
        .map(({ position }) => position);

describe("sorting positions a slice at a time", () => {
    const scratch = (count: number): [Int32Array, Int32Array] => [new Int32Array(count + 7), new Int32Array(count + 7)];

    it.each([0, 1, 255, 256, 257, 1_000, 4_096, 10_007])(
        "sorts %i positions stably, ties in their order",
        async (count) => {
            // Few distinct keys: most comparisons tie, and only the positions' order can break them.
            const keys = Array.from({ length: count }, (_, position) => (position * 7919) % 13);

            const sorted = await sortPositionsSliced(count, (left, right) => keys[left] - keys[right], scratch(count));

            expect(Array.from(sorted)).toEqual(stableOrder(keys));
        },
    );

    it("gives the loop turns while sorting and merging with a slow comparison, and still sorts right", async () => {
        const count = 1_000;
        const keys = Array.from({ length: count }, (_, position) => (position * 104729) % 997);

        const { result, turns } = await turnsDuring(() =>
            sortPositionsSliced(
                count,
                (left, right) => {
                    spin(0.02);
                    return keys[left] - keys[right];
                },
                scratch(count),
            ),
        );

        expect(Array.from(result)).toEqual(stableOrder(keys));
        // Sorting the 4 runs gives 3 turns at most; the rest came while merging.
        expect(turns).toBeGreaterThan(4);
    });
});

describe("stepping over an iterable a slice at a time", () => {
    it("takes up to the count asked and says when the items are used up", () => {
        const iterator = [1, 2, 3][Symbol.iterator]();
        const taken: number[] = [];

        expect(stepSome(iterator, (item) => taken.push(item), 2)).toBe(false);
        expect(taken).toEqual([1, 2]);
        expect(stepSome(iterator, (item) => taken.push(item), 2)).toBe(true);
        expect(taken).toEqual([1, 2, 3]);
    });

    it("runs the step over every item of a generator in order, giving the loop turns between slices", async () => {
        function* numbers(): Generator<number> {
            for (let number = 0; number < 3_000; number++) {
                yield number;
            }
        }
        const seen: number[] = [];

        const { turns } = await turnsDuring(() =>
            forOfSliced(numbers(), (number) => {
                spin(0.01);
                seen.push(number);
            }),
        );

        expect(seen).toEqual(Array.from({ length: 3_000 }, (_, number) => number));
        expect(turns).toBeGreaterThan(0);
    });
});
