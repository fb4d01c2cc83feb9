import { Worker } from "worker_threads";

import { withThreadHeap } from "../../src/worker/thread-heap";

const MB = 1024 * 1024;

// Plain JavaScript, so that no loader (ts-node) grows the young generation before it is read.
const TELLS_ITS_YOUNG_GENERATION = `
const { getHeapSpaceStatistics } = require("v8");
const { parentPort } = require("worker_threads");
parentPort.postMessage(getHeapSpaceStatistics().find((space) => space.space_name === "new_space").space_size);
`;

/** The number the thread posts first; the thread is ended then. */
const toldBy = (worker: Worker): Promise<number> =>
    new Promise((resolve, reject) => {
        worker.once("message", (size: number) => {
            resolve(size);
            void worker.terminate();
        });
        worker.once("error", reject);
    });

const start = (): Worker => new Worker(TELLS_ITS_YOUNG_GENERATION, { eval: true });

describe("a thread's young generation floor", () => {
    it("starts the thread with a young generation of at least the floor, and the threads after it without the floor", async () => {
        const before = await toldBy(start());
        const floored = await toldBy(withThreadHeap({ youngGenerationFloorMb: 16 }, start));
        const after = await toldBy(start());
        // V8 starts a young generation at a few megabytes and grows it only as its objects survive.
        expect(before).toBeLessThan(16 * MB);
        expect(floored).toBeGreaterThanOrEqual(16 * MB);
        expect(after).toBeLessThan(16 * MB);
    });

    it("sets the floor back for the threads after a thread that fails at once", async () => {
        const failing = withThreadHeap(
            { youngGenerationFloorMb: 16 },
            () => new Worker("throw new Error('no start')", { eval: true }),
        );
        await expect(new Promise((_resolve, reject) => failing.once("error", reject))).rejects.toThrow("no start");
        expect(await toldBy(start())).toBeLessThan(16 * MB);
    });
});

// Keeps 1.5 million small objects, then tells how many full collections its heap had meanwhile.
const COUNTS_ITS_FULL_COLLECTIONS = `
const { constants, PerformanceObserver } = require("perf_hooks");
const { parentPort } = require("worker_threads");
let full = 0;
new PerformanceObserver((list) => {
    full += list.getEntries().filter((entry) => entry.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR).length;
}).observe({ entryTypes: ["gc"] });
const kept = [];
for (let index = 0; index < 1500000; index++) {
    kept.push({ index, name: "wallet " + index, values: [index, index * 2] });
}
globalThis.kept = kept;
setTimeout(() => parentPort.postMessage(full), 100);
`;

describe("a thread's initial old generation", () => {
    it("spares the thread full collections while it grows to it; the threads after it start as V8 starts them", async () => {
        const count = (): Worker => new Worker(COUNTS_ITS_FULL_COLLECTIONS, { eval: true });
        const before = await toldBy(count());
        const sized = await toldBy(withThreadHeap({ initialOldGenerationMb: 1024 }, count));
        const after = await toldBy(count());
        // Node 20 (V8 11.3): 2, 0, 2; Node 22 (V8 12.4) still collects once: 2, 1, 2.
        expect(sized).toBeLessThan(before);
        expect(after).toBeGreaterThan(sized);
    });
});
