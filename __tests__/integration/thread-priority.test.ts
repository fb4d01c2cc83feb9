import { existsSync, readdirSync, readFileSync } from "fs";
import { getPriority } from "os";
import { join } from "path";

import { spawnWorker } from "../../src/worker/spawn";
import { startPlugin } from "../support/plugin-harness";
import { createWalletState } from "../support/wallet-state";

interface ThreadReport {
    priority: number;
    execArgv: string[];
}

/** What a thread reports of itself: its nice value, and the options it started with. */
const reportOfThread = (niceness: number): Promise<ThreadReport> =>
    new Promise((resolve, reject) => {
        const worker = spawnWorker("priority-thread", undefined, join(__dirname, "fixtures"), niceness);
        worker.once("message", (report: ThreadReport) => {
            resolve(report);
            void worker.terminate();
        });
        worker.once("error", reject);
    });

const priorityOfThread = async (niceness: number): Promise<number> => (await reportOfThread(niceness)).priority;

/** The nice value of each of this process's threads but the main one, from /proc (Linux). */
const otherThreadsNiceness = (): number[] =>
    readdirSync("/proc/self/task")
        .filter((task) => task !== String(process.pid))
        .flatMap((task) => {
            try {
                const stat = readFileSync(`/proc/self/task/${task}/stat`, "utf8");
                // Fields after the command's closing parenthesis: state is the 3rd field, nice the 19th.
                return [Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16])];
            } catch {
                return []; // the thread ended meanwhile
            }
        });

// On Linux each thread has a nice value of its own; elsewhere the plugin leaves priorities alone.
const lowered = (base: number, niceness: number): number =>
    process.platform === "linux" ? Math.min(19, base + niceness) : base;

describe("the plugin's threads yield the CPU to the node's", () => {
    const base = getPriority(0);

    it("starts a thread that many steps of nice below the thread that starts it, and leaves that thread as it was", async () => {
        expect(await priorityOfThread(10)).toBe(lowered(base, 10));
        expect(await priorityOfThread(3)).toBe(lowered(base, 3));
        expect(getPriority(0)).toBe(base);
    });

    it("lowers a thread before anything loads in it: ts-node's hook for a TypeScript thread loads after", async () => {
        // Loaded by an option, the hook (some 300 ms of compiling in the wallet thread) ran at the node's priority.
        const report = await reportOfThread(10);
        expect(report.priority).toBe(lowered(base, 10));
        expect(report.execArgv).toEqual(process.platform === "linux" ? [] : expect.any(Array));
    });

    it("starts a thread at the same priority with niceness 0, and never past 19", async () => {
        expect(await priorityOfThread(0)).toBe(base);
        expect(await priorityOfThread(19)).toBe(lowered(base, 19));
    });

    it("runs the delivery engine's and the checkpoints' threads at threads.niceness below the node's", async () => {
        const running = await startPlugin({ threads: { niceness: 7 } });
        try {
            expect(getPriority(0)).toBe(base);
            if (existsSync("/proc/self/task")) {
                const lowerThreads = otherThreadsNiceness().filter((nice) => nice === lowered(base, 7));
                // The engine's thread and the checkpoint thread, each with V8's and libuv's helpers started from it.
                expect(lowerThreads.length).toBeGreaterThanOrEqual(2);
            }
        } finally {
            await running.stop();
        }
    });

    it("runs the wallet lists' thread at threads.niceness below the node's", async () => {
        const state = createWalletState(200, 5, 5);
        try {
            const before = otherThreadsNiceness().filter((nice) => nice === lowered(base, 5)).length;
            const page = await state.catalogue.page({ offset: 0, limit: 10 }, [
                { property: "balance", direction: "desc" },
            ]);
            expect(page.totalCount).toBe(200);
            expect(getPriority(0)).toBe(base);
            if (existsSync("/proc/self/task")) {
                const after = otherThreadsNiceness().filter((nice) => nice === lowered(base, 5)).length;
                expect(after).toBeGreaterThan(before);
            }
        } finally {
            await state.catalogue.dispose();
        }
    });
});
