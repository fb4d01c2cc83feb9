import { existsSync } from "fs";

import { describeStall, StallAnatomy } from "../../../bench/stall-anatomy";

const busyFor = (ms: number): void => {
    const until = performance.now() + ms;
    while (performance.now() < until) {
        // holds the thread, as a long synchronous call would
    }
};

describe("the wallets bench's stall anatomy", () => {
    it("finds the longest stall of the thread and, on Linux, the thread's time on a CPU within it", async () => {
        const anatomy = new StallAnatomy();
        anatomy.start();
        await new Promise((resolve) => setTimeout(resolve, 20));
        busyFor(60);
        await new Promise((resolve) => setTimeout(resolve, 20));
        const stall = anatomy.stop();

        expect(stall).toBeDefined();
        expect(stall!.end - stall!.begin).toBeGreaterThanOrEqual(60);
        if (existsSync(`/proc/self/task/${process.pid}/schedstat`)) {
            // The busy loop ran on a CPU, and the thread can have been on a CPU or waiting for one only within the stall.
            expect(stall!.onCpuMs).toBeGreaterThan(0);
            expect(stall!.runQueueMs).toBeGreaterThanOrEqual(0);
        }
    });

    it("counts only the part of each collection that falls within the stall", () => {
        const stall = { begin: 100, end: 130, onCpuMs: 25, runQueueMs: 2 };
        const text = describeStall(stall, [
            { begin: 90, end: 105, major: false }, // 5 ms of it within
            { begin: 110, end: 120, major: true }, // all 10 within
            { begin: 140, end: 150, major: false }, // after it
        ]);

        expect(text).toBe("30.0 ms: collections 15.0 (young and major), on a CPU 25.0, waiting for one 2.0");
    });

    it("names the time the bench spent applying a block within the stall", () => {
        const stall = { begin: 100, end: 140 };
        const text = describeStall(
            stall,
            [{ begin: 120, end: 126, major: false }],
            [
                { begin: 95, end: 112 }, // 12 ms of it within
                { begin: 150, end: 160 }, // after it
            ],
        );

        expect(text).toBe("40.0 ms: collections 6.0 (young), the bench's block 12.0");
        expect(describeStall(stall, [], [{ begin: 10, end: 20 }])).toBe("40.0 ms: collections 0.0");
    });

    it("says none when no stall was seen, and leaves the CPU out where the kernel gives no figure", () => {
        expect(describeStall(undefined, [])).toBe("none");
        expect(describeStall({ begin: 0, end: 12 }, [])).toBe("12.0 ms: collections 0.0");
    });
});
