import { existsSync } from "fs";

import { CpuTimes, cpuTimesOf, KernelFigures, procFigures } from "../../../bench/kernel-figures";
import { describeStall, describeStalls, isMachinePause, ownStall, StallAnatomy } from "../../../bench/stall-anatomy";

const busyFor = (ms: number): void => {
    const until = performance.now() + ms;
    while (performance.now() < until) {
        // holds the thread, as a long synchronous call would
    }
};
const sleep = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms));
const onLinux = existsSync(`/proc/self/task/${process.pid}/schedstat`) && existsSync("/proc/stat");

/**
 * A machine of two CPUs whose host stops CPU 1, the thread's, now and then. The thread is always on
 * its CPU, as schedstat would tell; the CPU's accounted time follows the clock, all of it work, but
 * for the stops: a stop the host counts as steal shows as such, one it does not leaves time
 * unaccounted (no scheduler tick came).
 */
const pausableMachine = (): {
    figures: () => KernelFigures;
    pause: (ms: number, counted: "as steal" | "not at all") => void;
} => {
    let stolen = 0;
    let unaccounted = 0;
    const cpu = (): CpuTimes => ({ busyMs: performance.now() - stolen - unaccounted, idleMs: 0, stolenMs: stolen });
    return {
        figures: () => ({
            schedstat: () => [performance.now(), 0],
            thread: () => ({ cpu: 1, kernelMs: 0, pageFaults: 0 }),
            cpus: () => [{ busyMs: 0, idleMs: performance.now(), stolenMs: 0 }, cpu()],
            close: () => undefined,
        }),
        pause: (ms, counted) => {
            busyFor(ms);
            if (counted === "as steal") {
                stolen += ms;
            } else {
                unaccounted += ms;
            }
        },
    };
};

// The machine's pauses are made far longer than a preemption of this process by a busy machine
// (CI runs suites side by side on two cores), so that the longest stall is the pause.
const PAUSE_MS = 400;

describe("the wallets bench's stall anatomy", () => {
    it("finds the longest stall of the thread and, on Linux, its time on a CPU, all of it accounted", async () => {
        const anatomy = new StallAnatomy();
        anatomy.start();
        await sleep(20);
        busyFor(60);
        await sleep(40); // the steal is read 30 ms after the stall
        const { longest, longestOwn } = await anatomy.longest();

        expect(longest).toBeDefined();
        expect(longest!.end - longest!.begin).toBeGreaterThanOrEqual(60);
        if (onLinux) {
            // The busy loop ran on a CPU, and the thread can have been on a CPU or waiting for one only within the stall.
            expect(longest!.onCpuMs).toBeGreaterThan(0);
            expect(longest!.runQueueMs).toBeGreaterThanOrEqual(0);
            expect(longest!.stolenMs).toBeGreaterThanOrEqual(0);
            if (longest!.stolenMs! < 30 && longest!.untickedMs !== undefined) {
                // A CPU running the loop took its ticks: what they accounted is what passed, to
                // the 10 ms steps of /proc/stat (unless this very machine stood still in the loop,
                // which its steal would say).
                expect(Math.abs(longest!.untickedMs)).toBeLessThan(20);
                expect(longestOwn).toEqual(longest);
            }
        }
    });

    it("tells a stall in which the host held the CPU as steal from the longest of the process's own making", async () => {
        const machine = pausableMachine();
        const anatomy = new StallAnatomy(machine.figures);
        anatomy.start();
        await sleep(20);
        busyFor(30); // the process's own
        await sleep(40); // the steal of the stall before is read 30 ms after it
        machine.pause(PAUSE_MS, "as steal");
        await sleep(10);
        const stalls = await anatomy.longest();

        expect(stalls.longest!.end - stalls.longest!.begin).toBeGreaterThanOrEqual(PAUSE_MS);
        expect(stalls.longest!.stolenMs).toBe(PAUSE_MS);
        expect(isMachinePause(stalls.longest!)).toBe(true);
        expect(stalls.longestOwn!.end - stalls.longestOwn!.begin).toBeGreaterThanOrEqual(30);
        expect(stalls.longestOwn).not.toBe(stalls.longest);
        expect(stalls.longestOwn!.stolenMs).toBe(0);
        expect(ownStall(stalls)).toBe(stalls.longestOwn);
        expect(describeStalls(stalls, [])).toMatch(
            /^\d+\.\d ms: the machine stood still \(collections 0\.0, on a CPU \d+\.\d, .*taken by the hypervisor 400\); the longest besides, \d+\.\d ms: collections 0\.0, on a CPU/,
        );
    });

    it("tells a stall in which the thread was on a CPU that took no tick, the host counting no steal", async () => {
        const machine = pausableMachine();
        const anatomy = new StallAnatomy(machine.figures);
        anatomy.start();
        await sleep(20);
        busyFor(30); // the process's own
        await sleep(40);
        machine.pause(PAUSE_MS, "not at all");
        await sleep(10);
        const stalls = await anatomy.longest();

        expect(stalls.longest!.stolenMs).toBe(0);
        expect(stalls.longest!.untickedMs).toBeGreaterThanOrEqual(PAUSE_MS - 1);
        expect(isMachinePause(stalls.longest!)).toBe(true);
        expect(ownStall(stalls)).toBe(stalls.longestOwn);
        expect(stalls.longestOwn!.untickedMs).toBeLessThan(1);
        expect(describeStalls(stalls, [])).toMatch(
            /^\d+\.\d ms: the machine stood still \(.*its CPU unaccounted \d+\); the longest besides, /,
        );
    });

    it("keeps a stall of the process's own as the longest when the host took less than half of it", async () => {
        for (const counted of ["as steal", "not at all"] as const) {
            const machine = pausableMachine();
            const anatomy = new StallAnatomy(machine.figures);
            anatomy.start();
            await sleep(20);
            machine.pause(10, counted);
            busyFor(50);
            await sleep(10); // the timer's next tick ends the stall
            const stalls = await anatomy.longest();

            expect(isMachinePause(stalls.longest!)).toBe(false);
            expect(ownStall(stalls)).toBe(stalls.longest);
            expect(describeStalls(stalls, [])).not.toMatch(/stood still|besides/);
        }
    });

    it("tells the machine's stops only beyond the 10 ms steps of the kernel's figures, and only for a thread on its CPU", () => {
        expect(isMachinePause({ begin: 0, end: 9.4, stolenMs: 10 })).toBe(false); // one step of steal
        expect(isMachinePause({ begin: 0, end: 40, stolenMs: 20 })).toBe(true);
        expect(isMachinePause({ begin: 0, end: 40, onCpuMs: 40, untickedMs: 30 })).toBe(true);
        expect(isMachinePause({ begin: 0, end: 40, onCpuMs: 40, untickedMs: 10 })).toBe(false);
        // Asleep: an idle CPU's time is accounted however long it idles; the figure says nothing then.
        expect(isMachinePause({ begin: 0, end: 40, onCpuMs: 5, untickedMs: 30 })).toBe(false);
    });

    it("reads each CPU's times from /proc/stat in ms, and the kernel's own figures on Linux", () => {
        const text = [
            "cpu  1142719 568610 224998 2705927 26504 0 38987 6270 0 0",
            "cpu0 544113 287259 108263 1391804 3475 0 19003 3195 0 0",
            "cpu1 598605 281350 116735 1314122 23029 0 19983 3075 0 0",
            "intr 1 2 3",
        ].join("\n");
        expect(cpuTimesOf(text)).toEqual([
            { busyMs: (544113 + 287259 + 108263 + 0 + 19003) * 10, idleMs: (1391804 + 3475) * 10, stolenMs: 31950 },
            { busyMs: (598605 + 281350 + 116735 + 0 + 19983) * 10, idleMs: (1314122 + 23029) * 10, stolenMs: 30750 },
        ]);

        if (onLinux) {
            const figures = procFigures();
            try {
                const cpus = figures.cpus()!;
                const thread = figures.thread()!;
                expect(cpus.length).toBeGreaterThan(thread.cpu);
                expect(cpus.every(({ busyMs, stolenMs }) => busyMs > 0 && stolenMs >= 0)).toBe(true);
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
