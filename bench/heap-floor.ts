/**
 * The floor under the wallets bench's stalls: a process of its own holding the same core-state
 * repository and nothing of this plugin running (no wallet thread, no server, no listener), whose
 * thread only allocates short-lived objects at about the rate it does while it serves our listings,
 * and applies the bench's blocks. What its event loop shows is what a node of that size pays for its
 * own heap on this machine, whoever allocates.
 *
 * Why it is needed: every young collection of V8 11.3 (Node 20) walks the header of every page of
 * the old generation on the node's thread, to find the pages that hold pointers into the young one
 * (Node 22's collections measure alike). A million wallets keep some 0.9 GB there, 3,500 pages or
 * more, and a page's header costs about a microsecond to reach on the 2-core virtual machine the
 * figures come from: under `perf` at a million wallets, 91% of the node's thread's samples in young
 * collections fell in that walk (docs/performance.md).
 */
import "reflect-metadata";

import { fork } from "child_process";
import { constants, monitorEventLoopDelay, PerformanceObserver } from "perf_hooks";

import { createBareWalletState } from "../__tests__/support/wallet-state";
import { nextMessageOf } from "./child-messages";
import { percentile } from "./load";
import { applyBlock } from "./wallet-blocks";

// About what the node's thread allocates while it answers our listings (82 KB a request at some
// 2,500 requests a second), a thousandth of it every millisecond.
const BYTES_PER_SECOND = 200e6;
const WINDOWS = 3;
const WINDOW_MS = 10_000;
const ARM_MS = 5;
const BLOCK_TIME_MS = 8_000;
// Spells of idleness, each followed by allocation until a young collection comes.
const IDLE_SPELLS = 5;
const IDLE_MS = 2_000;
// One short-lived object of the churn: a small record and its array, some 100 bytes.
const CHURN_OBJECT_BYTES = 100;

export interface HeapFloor {
    heapUsedMb: number;
    youngCollections: number[];
    windowStallsMs: number[];
    afterIdleMs: number[];
}

type FromFloor = { kind: "floor"; floor: HeapFloor };

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let sink: unknown;
const churn = (bytes: number): void => {
    for (let made = 0; made < bytes; made += CHURN_OBJECT_BYTES) {
        sink = { made, items: [made, bytes] };
    }
};

/** In the floor's own process: builds the state, then measures. */
const measure = async (size: number): Promise<HeapFloor> => {
    const state = createBareWalletState(size);
    const wallets = state.repository.allByAddress();
    const collectAndSettle = async (): Promise<void> => {
        (globalThis as { gc?: () => void }).gc?.();
        await sleep(IDLE_MS); // the sweeper threads finish what the forced collection left
    };
    await collectAndSettle();
    const heapUsedMb = process.memoryUsage().heapUsed / 1e6;
    const young: number[] = [];
    const observer = new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) {
            if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) {
                young.push(entry.duration);
            }
        }
    });
    observer.observe({ entryTypes: ["gc"] });

    // Windows as long as the wallets bench's, each with its longest stall: one window alone cannot
    // tell how often the floor itself passes 20 ms.
    const delay = monitorEventLoopDelay({ resolution: 1 });
    const windowStallsMs: number[] = [];
    let block = 0;
    for (let window = 0; window < WINDOWS; window++) {
        delay.reset();
        delay.enable();
        const churning = setInterval(() => churn(BYTES_PER_SECOND / 1000), 1);
        const blocks = setInterval(() => applyBlock(state, wallets, block++), BLOCK_TIME_MS);
        await sleep(WINDOW_MS);
        clearInterval(churning);
        clearInterval(blocks);
        await sleep(ARM_MS); // a stall that ended just now is counted at the next tick
        delay.disable();
        windowStallsMs.push(delay.max / 1e6);
    }
    await sleep(10); // the last collections' entries are delivered
    const youngCollections = young.splice(0);

    const afterIdleMs: number[] = [];
    for (let spell = 0; spell < IDLE_SPELLS; spell++) {
        await sleep(IDLE_MS);
        while (young.length === 0) {
            churn(BYTES_PER_SECOND / 1000);
            await new Promise((resolve) => setImmediate(resolve));
        }
        afterIdleMs.push(young[0]);
        young.length = 0;
    }
    observer.disconnect();
    void sink;
    return { heapUsedMb, youngCollections, windowStallsMs, afterIdleMs };
};

/** Measures the floor for `size` wallets in a process of its own, which ends after. */
export const measureHeapFloor = async (size: number): Promise<HeapFloor> => {
    const child = fork(__filename, [String(size)], {
        execArgv: ["--max-old-space-size=8192", "--expose-gc", "--require", "ts-node/register/transpile-only"],
        stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    try {
        const { floor } = (await nextMessageOf<FromFloor>(child, "floor", "the heap floor's process")) as FromFloor;
        return floor;
    } finally {
        child.kill();
    }
};

export const describeHeapFloor = (size: number, floor: HeapFloor): string => {
    const sorted = [...floor.youngCollections].sort((a, b) => a - b);
    return `Floor of this machine for a node of this size: a process of its own holding the same core-state repository (${size.toLocaleString("en")} wallets, heap ${floor.heapUsedMb.toFixed(0)} MB) and nothing of the plugin, its thread allocating ${BYTES_PER_SECOND / 1e6} MB/s of short-lived objects with a block every ${BLOCK_TIME_MS / 1000} s: longest event-loop stall of each of ${WINDOWS} windows of ${WINDOW_MS / 1000} s ${floor.windowStallsMs.map((ms) => ms.toFixed(1)).join(", ")} ms; ${sorted.length} young collections, p50 ${percentile(sorted, 0.5).toFixed(1)} ms, max ${sorted[sorted.length - 1]?.toFixed(1) ?? "-"} ms; the first young collection after each of ${IDLE_SPELLS} idle spells of ${IDLE_MS / 1000} s: ${floor.afterIdleMs.map((ms) => ms.toFixed(1)).join(", ")} ms.`;
};

if (require.main === module) {
    void measure(Number(process.argv[2])).then((floor) => {
        process.send?.({ kind: "floor", floor } satisfies FromFloor);
    });
}
