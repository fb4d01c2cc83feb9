/**
 * One plugin in a host process of its own, as a node hosts it: a core-kernel event dispatcher
 * with the plugin's listener on "*". Driven by bench/cost.ts over IPC: it dispatches blocks of
 * transaction.applied events and measures, in this process, what the plugin costs its event loop.
 * argv: "ours" | "ark", the receiver's URL.
 */
import "reflect-metadata";

import { loadCompiledPlugin } from "./compiled-plugin";
import { profileThreads } from "./thread-profiles";
loadCompiledPlugin();
profileThreads();

import { Container, Contracts, Services } from "@arkecosystem/core-kernel";
import { randomUUID } from "crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { monitorEventLoopDelay, performance } from "perf_hooks";

import { freePort } from "../__tests__/support/ports";
import { startPlugin } from "../__tests__/support/plugin-harness";
import { heardBesides } from "../src/events/kernel-listeners";
import { startArkWebhooks } from "./ark-webhooks";

export interface CostPlan {
    webhooks: number;
    blocks: number;
    eventsPerBlock: number;
    blockIntervalMs: number;
}

export type ToHost = { kind: "run"; plan: CostPlan } | { kind: "delivered" } | { kind: "finish" };

export interface CostFigures {
    /** Main-thread busy time (event-loop utilisation's active time) over the run. */
    busyMs: number;
    /** User + system CPU of the whole process (every thread) over the run. */
    cpuMs: number;
    /**
     * The same from the start of block WARM_UP_BLOCKS + 1 on: what a node that has run a while pays.
     * The first blocks also pay for a fresh thread's compiling its code (the engine's, in ours).
     */
    cpuAfterWarmUpMs: number;
    delayP99Ms: number;
    delayMaxMs: number;
}

/** Blocks whose CPU the "after warm-up" figure leaves out. */
export const WARM_UP_BLOCKS = 2;

export type FromHost = { kind: "ready" } | { kind: "dispatched" } | { kind: "figures"; figures: CostFigures };

const [which, target] = process.argv.slice(2);
const send = (message: FromHost): void => void process.send?.(message);

// A real transfer as a 3.9.1 node dispatches it (reference/node-samples).
const SAMPLE: Record<string, unknown> = {
    version: 2,
    network: 23,
    typeGroup: 1,
    type: 0,
    nonce: "3",
    senderPublicKey: "03287bfebba4c7881a0509717e71b34b63f31e40021c321f89ae04f84be6d6ac37",
    fee: "10000000",
    amount: "12300000000",
    vendorField: "probe",
    expiration: 0,
    recipientId: "AG3J2HrvECHzTcLHcRpJxtN7vR7Z46sGpA",
    signature:
        "0c91bf8018ef23e32846a1b5c76de6e97791d76048375cbe61d7fbb0a798895fd226e011a113a8bff8a28b858c638521d8c4b769cdab677c089771e19ed0d688",
};

const next = (kind: ToHost["kind"]): Promise<ToHost> =>
    new Promise((resolve) => {
        const listener = (message: ToHost): void => {
            if (message.kind === kind) {
                process.off("message", listener);
                resolve(message);
            }
        };
        process.on("message", listener);
    });

type Dispatch = (name: string, data: unknown) => Promise<void>;

/** Boots the plugin with its webhooks in a kernel event dispatcher; returns how to dispatch and stop. */
const boot = async (plan: CostPlan, dir: string): Promise<{ dispatch: Dispatch; stop: () => Promise<void> }> => {
    if (which === "floor") {
        // A listener that does nothing: the dispatcher calls one, as it calls a plugin's.
        const events = new Services.Events.MemoryEventDispatcher();
        events.listen("*", { handle: () => undefined });
        return { dispatch: (name, data) => events.dispatch(name, data), stop: async () => undefined };
    }
    if (which === "ark") {
        const seed = Array.from({ length: plan.webhooks }, () => ({
            id: randomUUID(),
            event: "transaction.applied",
            target,
            enabled: true,
            conditions: [],
            token: randomUUID(),
        }));
        const ark = await startArkWebhooks(dir, await freePort(), seed, true);
        const events = ark.app.get<Services.Events.MemoryEventDispatcher>(Container.Identifiers.EventDispatcherService);
        return { dispatch: (name, data) => events.dispatch(name, data), stop: () => ark.stop() };
    }
    const container = new Container.Container();
    container.bind("events").to(Services.Events.MemoryEventDispatcher).inSingletonScope();
    const events = container.get<Services.Events.MemoryEventDispatcher>("events");
    // As in a node: announcements go to the kernel when a listener besides the plugin's hears them.
    // BENCH_HEARD=1 adds one that does nothing, for the cost of announcing every attempt.
    if (process.env.BENCH_HEARD) {
        events.listen("webhooks.broadcasted", { handle: () => undefined });
    }
    const own: { listener?: Contracts.Kernel.EventListener } = {};
    const running = await startPlugin(
        { server: { whitelist: ["127.0.0.1"] } },
        {
            dir,
            dispatchEvent: (name, data) => void events.dispatch(name, data),
            isHeard: heardBesides(events, () => own.listener),
            engine: process.env.BENCH_INLINE ? "inline" : "thread",
        },
    );
    for (let index = 0; index < plan.webhooks; index++) {
        await running.plugin.register.create({
            event: "transaction.applied",
            target,
            enabled: true,
            conditions: [],
            match: "any",
        });
    }
    own.listener = running.plugin.listener;
    const unlisten = events.listen("*", running.plugin.listener);
    return {
        dispatch: (name, data) => events.dispatch(name, data),
        stop: async () => {
            unlisten();
            await running.stop({ keepFiles: true });
        },
    };
};

/** CPU ticks (1/100 s) of each of this process's threads, by thread id (the main thread's is the pid), from /proc (Linux only). */
const threadTicks = (): Map<string, number> => {
    const ticks = new Map<string, number>();
    const tasks = existsSync("/proc/self/task") ? readdirSync("/proc/self/task") : [];
    for (const task of tasks) {
        try {
            const stat = readFileSync(`/proc/self/task/${task}/stat`, "utf8");
            const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
            const name = task === String(process.pid) ? "main" : `${comm} (${task})`;
            const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
            const used = Number(fields[11]) + Number(fields[12]);
            ticks.set(name, (ticks.get(name) ?? 0) + used);
        } catch {
            // The thread ended meanwhile.
        }
    }
    return ticks;
};

/** Bytes of the SQLite files (database and its log) under the host's folder. */
const databaseBytes = (dir: string): number =>
    readdirSync(dir, { recursive: true, encoding: "utf8" })
        .filter((name) => /\.sqlite(-wal)?$/.test(name))
        .reduce((total, name) => total + statSync(join(dir, name)).size, 0);

const main = async (): Promise<void> => {
    const dir = mkdtempSync(join(tmpdir(), "cww-bench-cost-"));
    send({ kind: "ready" });
    const { plan } = (await next("run")) as Extract<ToHost, { kind: "run" }>;
    const { dispatch, stop } = await boot(plan, dir);

    const delay = monitorEventLoopDelay({ resolution: 1 });
    // The histogram counts a stall from its second tick on: the first block must not come before it.
    delay.enable();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const before = performance.eventLoopUtilization();
    const cpuBefore = process.cpuUsage();
    const ticksBefore = threadTicks();
    const started = performance.now();
    let cpuAfterWarmUp = cpuBefore;
    for (let block = 0; block < plan.blocks; block++) {
        const at = started + block * plan.blockIntervalMs;
        if (at > performance.now()) {
            await new Promise((resolve) => setTimeout(resolve, at - performance.now()));
        }
        if (block === WARM_UP_BLOCKS) {
            cpuAfterWarmUp = process.cpuUsage();
        }
        // The kernel dispatches a block's transactions one after another, each awaited.
        for (let sequence = 0; sequence < plan.eventsPerBlock; sequence++) {
            await dispatch("transaction.applied", {
                ...SAMPLE,
                id: `${randomUUID()}${randomUUID()}`.replace(/-/g, ""),
                blockHeight: block + 2,
                sequence,
            });
        }
    }
    send({ kind: "dispatched" });
    // Measured until the receiver (in the parent) has every delivery, or the parent gave up waiting.
    await next("delivered");
    delay.disable();
    const used = performance.eventLoopUtilization(before);
    const cpu = process.cpuUsage(cpuBefore);
    const cpuAfter = process.cpuUsage(cpuAfterWarmUp);
    if (process.env.BENCH_THREADS) {
        const after = threadTicks();
        const spent = [...after]
            .map(([name, ticks]): [string, number] => [name, (ticks - (ticksBefore.get(name) ?? 0)) * 10])
            .filter(([, ms]) => ms > 0)
            .sort((a, b) => b[1] - a[1])
            .map(([name, ms]) => `${name} ${ms} ms`);
        console.error(`threads of the ${process.argv[2]} host: ${spent.join(", ")}`);
    }
    if (which === "ours") {
        console.error(`the ours host's SQLite file and log after the run: ${(databaseBytes(dir) / 1e6).toFixed(1)} MB`);
    }
    send({
        kind: "figures",
        figures: {
            busyMs: used.active,
            cpuMs: (cpu.user + cpu.system) / 1000,
            cpuAfterWarmUpMs: (cpuAfter.user + cpuAfter.system) / 1000,
            delayP99Ms: delay.percentile(99) / 1e6,
            delayMaxMs: delay.max / 1e6,
        },
    });
    await next("finish");
    await stop();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
};

main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
});
