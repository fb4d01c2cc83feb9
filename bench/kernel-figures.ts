import { closeSync, openSync, readSync } from "fs";

/** What the kernel tells of one thread and of the machine it runs on; undefined where it gives no figure. */
export interface KernelFigures {
    /** The thread's time on a CPU and waiting for one, in ms (its schedstat). */
    schedstat(): [onCpuMs: number, runQueueMs: number] | undefined;
    /** The thread's CPU, its time in the kernel, its page faults so far. */
    thread(): ThreadFigures | undefined;
    /** Per CPU, its time accounted so far (/proc/stat). */
    cpus(): CpuTimes[] | undefined;
    close(): void;
}

/**
 * A CPU's time as the kernel accounts it, in ms, in 10 ms steps. A virtual CPU that stops running
 * (its host paused it) shows in one of two ways, and schedstat in neither (it counts the pause as
 * time on a CPU for the thread it froze): as steal, where the host counts it so; or as time the
 * kernel never accounted, because the scheduler's tick, which accounts a busy CPU's time a tick at
 * a time, did not come while it stood (a guest's tick fires once on waking, however late).
 */
export interface CpuTimes {
    /** Time accounted to work: user, nice, system, interrupts. */
    busyMs: number;
    /** Time accounted idle, or waiting for I/O. */
    idleMs: number;
    /** Time the hypervisor ran something else while the CPU had work (the kernel's steal). */
    stolenMs: number;
}

export interface ThreadFigures {
    /** The CPU it ran on last. */
    cpu: number;
    /** Its time on a CPU in the kernel so far, in 10 ms steps. */
    kernelMs: number;
    /** Its page faults so far, minor and major. */
    pageFaults: number;
}

// /proc/stat counts in USER_HZ ticks, 100 a second on Linux whatever the kernel's own tick.
const MS_PER_USER_HZ_TICK = 10;
// /proc/[pid]/task/[tid]/stat: the fields after the command's closing parenthesis start at the
// 3rd (state). proc(5) numbers them from 1.
const FIELD = { minorFaults: 10 - 3, majorFaults: 12 - 3, kernelTicks: 15 - 3, processor: 39 - 3 };

const openOrUndefined = (path: string): number | undefined => {
    try {
        return openSync(path, "r");
    } catch {
        return undefined; // not Linux: the stall is still timed
    }
};

/** Parses /proc/stat's per-CPU lines ("cpu0 user nice system idle iowait irq softirq steal ..."). */
export const cpuTimesOf = (procStat: string): CpuTimes[] =>
    procStat
        .split("\n")
        .filter((line) => /^cpu\d/.test(line))
        .map((line) => {
            const [user, nice, system, idle, iowait, irq, softirq, steal] = line.split(/\s+/).slice(1).map(Number);
            return {
                busyMs: (user + nice + system + irq + softirq) * MS_PER_USER_HZ_TICK,
                idleMs: (idle + iowait) * MS_PER_USER_HZ_TICK,
                stolenMs: steal * MS_PER_USER_HZ_TICK,
            };
        });

/** The figures of the calling process's main thread, from /proc. */
export const procFigures = (): KernelFigures => {
    const files = {
        schedstat: openOrUndefined(`/proc/self/task/${process.pid}/schedstat`),
        stat: openOrUndefined(`/proc/self/task/${process.pid}/stat`),
        machine: openOrUndefined("/proc/stat"),
    };
    const buffer = Buffer.alloc(8192); // /proc/stat's per-CPU lines come first, before its long interrupt line
    const read = (file: number | undefined, until?: string): string | undefined => {
        if (file === undefined) {
            return undefined;
        }
        const length = readSync(file, buffer, 0, buffer.length, 0);
        const stop = until === undefined ? -1 : buffer.indexOf(until);
        return buffer.toString("latin1", 0, stop >= 0 && stop < length ? stop : length);
    };
    return {
        schedstat: () => {
            const text = read(files.schedstat);
            if (text === undefined) {
                return undefined;
            }
            const [onCpuNs, runQueueNs] = text.split(" ").map(Number);
            return [onCpuNs / 1e6, runQueueNs / 1e6];
        },
        thread: () => {
            const text = read(files.stat);
            if (text === undefined) {
                return undefined;
            }
            const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
            return {
                cpu: Number(fields[FIELD.processor]),
                kernelMs: Number(fields[FIELD.kernelTicks]) * MS_PER_USER_HZ_TICK,
                pageFaults: Number(fields[FIELD.minorFaults]) + Number(fields[FIELD.majorFaults]),
            };
        },
        cpus: () => {
            const text = read(files.machine, "intr"); // what follows the CPUs' lines is of no use here
            return text === undefined ? undefined : cpuTimesOf(text);
        },
        close: () => {
            for (const file of Object.values(files)) {
                if (file !== undefined) {
                    closeSync(file);
                }
            }
        },
    };
};
