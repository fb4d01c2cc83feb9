import { Worker } from "worker_threads";

import { withThreadHeap } from "../../src/worker/thread-heap";

// Plain JavaScript, so that no loader (ts-node) collects before it counts. It allocates 256 MB of
// short-lived objects and tells how many young collections (scavenges) that took. V8 13 and later
// report only the committed part of a young generation, so its floor shows in what it does, not
// in its size: a young generation of 16 MB takes a few dozen scavenges where V8's own (1 MB at
// the start, grown as objects survive) takes over a hundred.
const COUNTS_ITS_YOUNG_COLLECTIONS = `
const { constants, PerformanceObserver } = require("perf_hooks");
const { parentPort } = require("worker_threads");
let young = 0;
new PerformanceObserver((list) => {
    young += list.getEntries().filter((entry) => entry.detail.kind === constants.NODE_PERFORMANCE_GC_MINOR).length;
}).observe({ entryTypes: ["gc"] });
let last;
for (let index = 0; index < 4000000; index++) {
    last = { index, values: [index, index + 1] };
}
globalThis.last = last;
setTimeout(() => parentPort.postMessage(young), 100);
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

const start = (): Worker => new Worker(COUNTS_ITS_YOUNG_COLLECTIONS, { eval: true });

describe("a thread's young generation floor", () => {
    it("collects a thread's young generation a fraction as often with the floor, and the threads after it as before", async () => {
        const before = await toldBy(start());
        const floored = await toldBy(withThreadHeap({ youngGenerationFloorMb: 16 }, start));
        const after = await toldBy(start());
        expect(floored).toBeLessThan(before / 2);
        expect(after).toBeGreaterThan(floored * 2);
    });

    it("sets the floor back for the threads after a thread that fails at once", async () => {
        const floored = await toldBy(withThreadHeap({ youngGenerationFloorMb: 16 }, start));
        const failing = withThreadHeap(
            { youngGenerationFloorMb: 16 },
            () => new Worker("throw new Error('no start')", { eval: true }),
        );
        await expect(new Promise((_resolve, reject) => failing.once("error", reject))).rejects.toThrow("no start");
        expect(await toldBy(start())).toBeGreaterThan(floored * 2);
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
