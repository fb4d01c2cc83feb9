import { existsSync } from "fs";

import { KernelFigures, procFigures, stealOf } from "../../../bench/kernel-figures";
import { describeStall, describeStalls, ownStall, StallAnatomy } from "../../../bench/stall-anatomy";

const busyFor = (ms: number): void => {
    const until = performance.now() + ms;
    while (performance.now() < until) {
        // holds the thread, as a long synchronous call would
    }
};
const sleep = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms));
const onLinux = existsSync(`/proc/self/task/${process.pid}/schedstat`) && existsSync("/proc/stat");

/**
 * A machine of two CPUs whose hypervisor takes CPU 1, the thread's, while `pausing` is set: each
 * read of the steal after such a stretch counts its length on that CPU, as the kernel's would.
 */
const pausableMachine = (): { figures: () => KernelFigures; pause: (ms: number) => void } => {
    const steal = [0, 0];
    return {
        figures: () => ({
            schedstat: () => undefined,
            thread: () => ({ cpu: 1, kernelMs: 0, pageFaults: 0 }),
            steal: () => [...steal],
            close: () => undefined,
        }),
        pause: (ms) => {
            busyFor(ms);
            steal[1] += ms;
        },
    };
};

describe("the wallets bench's stall anatomy", () => {
    it("finds the longest stall of the thread and, on Linux, the thread's time on a CPU and the steal within it", async () => {
        const anatomy = new StallAnatomy();
        anatomy.start();
        await sleep(20);
        busyFor(60);
        await sleep(20);
        const { longest, longestOwn } = await anatomy.longest();

        expect(longest).toBeDefined();
        expect(longest!.end - longest!.begin).toBeGreaterThanOrEqual(60);
        if (onLinux) {
            // The busy loop ran on a CPU, and the thread can have been on a CPU or waiting for one only within the stall.
            expect(longest!.onCpuMs).toBeGreaterThan(0);
            expect(longest!.runQueueMs).toBeGreaterThanOrEqual(0);
            expect(longest!.stolenMs).toBeGreaterThanOrEqual(0);
            if (longest!.stolenMs! < 30) {
                // (unless this very machine stood still within the busy loop)
                expect(longestOwn).toEqual(longest);
            }
        }
    });

    it("tells a stall in which the machine stood still from the longest of the process's own making", async () => {
        const machine = pausableMachine();
        const anatomy = new StallAnatomy(machine.figures);
        anatomy.start();
        await sleep(20);
        busyFor(30); // the process's own
        await sleep(40); // the steal of the stall before is read 30 ms after it
        machine.pause(80);
        await sleep(10);
        const stalls = await anatomy.longest();

        expect(stalls.longest!.end - stalls.longest!.begin).toBeGreaterThanOrEqual(80);
        expect(stalls.longest!.stolenMs).toBe(80);
        expect(stalls.longestOwn!.end - stalls.longestOwn!.begin).toBeGreaterThanOrEqual(30);
        expect(stalls.longestOwn).not.toBe(stalls.longest);
        expect(stalls.longestOwn!.stolenMs).toBe(0);
        expect(ownStall(stalls)).toBe(stalls.longestOwn);
        expect(describeStalls(stalls, [])).toMatch(
            /^\d+\.\d ms: the machine stood still \(collections 0\.0, in the kernel 0 \(0 page faults\), taken by the hypervisor 80\); the longest besides, \d+\.\d ms: collections 0\.0, in the kernel 0 \(0 page faults\)$/,
        );
    });

    it("keeps a stall of the process's own as the longest when the hypervisor took less than half of it", async () => {
        const machine = pausableMachine();
        const anatomy = new StallAnatomy(machine.figures);
        anatomy.start();
        await sleep(20);
        machine.pause(10);
        busyFor(50);
        await sleep(10); // the timer's next tick ends the stall
        const stalls = await anatomy.longest();

        expect(stalls.longest!.stolenMs).toBe(10);
        expect(ownStall(stalls)).toBe(stalls.longest);
        expect(describeStalls(stalls, [])).toMatch(
            /^\d+\.\d ms: collections 0\.0, in the kernel 0 \(0 page faults\), taken by the hypervisor 10$/,
        );
    });

    it("reads each CPU's steal from /proc/stat in ms, and the kernel's own figures on Linux", () => {
        const text = [
            "cpu  1142719 568610 224998 2705927 26504 0 38987 6270 0 0",
            "cpu0 544113 287259 108263 1391804 3475 0 19003 3195 0 0",
            "cpu1 598605 281350 116735 1314122 23029 0 19983 3075 0 0",
            "intr 1 2 3",
        ].join("\n");
        expect(stealOf(text)).toEqual([31950, 30750]);

        if (onLinux) {
            const figures = procFigures();
            try {
                expect(figures.steal()!.length).toBeGreaterThan(0);
                expect(figures.steal()!.every((ms) => Number.isFinite(ms) && ms >= 0)).toBe(true);
                const thread = figures.thread()!;
                expect(figures.steal()!.length).toBeGreaterThan(thread.cpu);
                expect(thread.kernelMs).toBeGreaterThanOrEqual(0);
                // This test's process faulted its pages in.
                expect(thread.pageFaults).toBeGreaterThan(0);
                expect(figures.schedstat()![0]).toBeGreaterThan(0);
            } finally {
                figures.close();
            }
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
        expect(describeStalls({}, [])).toBe("none");
        expect(describeStall({ begin: 0, end: 12 }, [])).toBe("12.0 ms: collections 0.0");
    });
});
