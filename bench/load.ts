import { ChildProcess, spawn } from "child_process";
import { setPriority } from "os";
import { Worker } from "worker_threads";

export interface LoadResult {
    requests: number;
    perSecond: number;
    p50Ms: number;
    p99Ms: number;
    statuses: Record<number, number>;
}

export interface LoadOptions {
    concurrency: number;
    /** Stops after this many requests or this much time, whichever comes first. */
    maxRequests: number;
    maxMs: number;
    /** Where the client runs; a thread unless said. */
    host?: ClientHost;
}

/**
 * Where the client runs: a thread of the measured process (its own event loop, but the process's
 * heap pages, address space and V8 helper threads), or a process of its own, as a node's clients are.
 */
export type ClientHost = "thread" | "process";

/** The i-th request uses urls[i % urls.length] and, when given, bodies[i % bodies.length]. */
export interface LoadPlan {
    method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
    urls: readonly string[];
    bodies?: readonly string[];
}

// The load runs in a thread or a process of its own, so that it does not take the event loop of the
// server it measures: both plugins' servers run in the benchmark's main thread.
const LOAD_CLIENT = `async (parentPort, workerData) => {
const { performance } = require("perf_hooks");
const { Agent, request } = require(workerData.undici);
const { plan, options } = workerData;
const run = async () => {
    const agent = new Agent({ connections: options.concurrency, pipelining: 1 });
    // Started and loaded before the measured window: the caller says when it opens.
    await new Promise((resolve) => {
        parentPort.once("message", resolve);
        parentPort.postMessage({ ready: true });
    });
    const latencies = [];
    const statuses = {};
    let issued = 0;
    const started = performance.now();
    const worker = async () => {
        while (issued < options.maxRequests && performance.now() - started < options.maxMs) {
            const index = issued++;
            const url = plan.urls[index % plan.urls.length];
            const body = plan.bodies ? plan.bodies[index % plan.bodies.length] : undefined;
            const begin = performance.now();
            let status = 0;
            try {
                const response = await request(url, {
                    method: plan.method || "GET",
                    body,
                    dispatcher: agent,
                    headers: body ? { "content-type": "application/json" } : {},
                });
                await response.body.text();
                status = response.statusCode;
                latencies.push(performance.now() - begin);
            } catch (error) {
                // A connection the server reset (ARK's resets kept-alive sockets under load): counted as status 0.
            }
            statuses[status] = (statuses[status] || 0) + 1;
        }
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
    const elapsed = performance.now() - started;
    await agent.close();
    parentPort.postMessage({ latencies, statuses, elapsed });
};
run().catch((error) => parentPort.postMessage({ error: String(error) }));
}`;

// Asks for pages one after another, from a thread or a process of its own like the load, and times
// each: the node's thread then pays for the server's work alone.
const ASKER_CLIENT = `async (parentPort, workerData) => {
const { performance } = require("perf_hooks");
const { Agent, request } = require(workerData.undici);
const agent = new Agent({ connections: workerData.connections, pipelining: 1 });
const timed = async (url) => {
    const begin = performance.now();
    const response = await request(url, { dispatcher: agent });
    await response.body.text();
    return performance.now() - begin;
};
parentPort.on("message", async (asked) => {
    if (asked === "close") {
        await agent.close();
        parentPort.close();
        return;
    }
    try {
        const latencies = [];
        if (asked.together) {
            latencies.push(...(await Promise.all(asked.urls.map(timed))));
        } else {
            for (const url of asked.urls) {
                latencies.push(await timed(url));
            }
        }
        parentPort.postMessage({ latencies });
    } catch (error) {
        parentPort.postMessage({ error: String(error) });
    }
});
}`;

/** A client script's side of the conversation, whichever its host. */
interface ClientPeer {
    postMessage(message: unknown): void;
    once(event: "message" | "error" | "exit", listener: (value: never) => void): void;
    on(event: "message" | "error", listener: (value: never) => void): void;
    terminate(): Promise<void>;
}

// In a process, the script's data comes as its first message and `parentPort` is the IPC channel;
// the client ends with the channel, so that a bench stopped or killed leaves no client running.
const PROCESS_PRELUDE = `
process.on("disconnect", () => process.exit(0));
const channel = {
    postMessage: (message) => process.send(message),
    once: (event, listener) => process.once(event, listener),
    on: (event, listener) => process.on(event, listener),
    close: () => process.disconnect(),
};`;

// A client in a process runs this many steps of nice below the measured process (its main
// thread, where its requests are made): a node's clients are other machines, and on a small one the
// load's process would otherwise take the CPU from the node's thread and V8's helpers it measures.
// BENCH_CLIENT_NICE=0 gives it the same priority.
const CLIENT_NICENESS = Number(process.env.BENCH_CLIENT_NICE ?? 10);

/** A process of the bench's other than the measured one (a client, core-api's host) runs CLIENT_NICENESS below it. */
export const lowerBelowBench = (pid: number | undefined): void => {
    if (CLIENT_NICENESS > 0 && pid !== undefined) {
        try {
            setPriority(pid, CLIENT_NICENESS);
        } catch {
            // At the node's priority, as before.
        }
    }
};

const startClient = (client: string, workerData: unknown, host: ClientHost): ClientPeer => {
    if (host === "thread") {
        const script = `const { parentPort, workerData } = require("worker_threads");\n(${client})(parentPort, workerData);`;
        const worker = new Worker(script, { eval: true, workerData });
        return {
            postMessage: (message) => worker.postMessage(message),
            once: (event, listener) => worker.once(event, listener as (value: unknown) => void),
            on: (event, listener) => worker.on(event, listener as (value: unknown) => void),
            terminate: async () => {
                await worker.terminate();
            },
        };
    }
    const script = `${PROCESS_PRELUDE}\nprocess.once("message", (workerData) => (${client})(channel, workerData));`;
    const child: ChildProcess = spawn(process.execPath, ["-e", script], {
        stdio: ["ignore", "inherit", "inherit", "ipc"],
        serialization: "advanced",
    });
    lowerBelowBench(child.pid);
    child.send(workerData as never);
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    return {
        postMessage: (message) => child.send(message as never),
        once: (event, listener) => child.once(event, listener as (value: unknown) => void),
        on: (event, listener) => child.on(event, listener as (value: unknown) => void),
        terminate: async () => {
            if (child.exitCode === null && child.signalCode === null) {
                child.kill();
            }
            await exited;
        },
    };
};

export interface Asker {
    /** Each URL asked once, one after another: each response's time, from its request to its body's end. */
    timeEach(urls: readonly string[]): Promise<number[]>;
    /** Each URL asked once, all at once (over as many connections as the asker was given). */
    timeTogether(urls: readonly string[]): Promise<number[]>;
    close(): Promise<void>;
}

export const startAsker = (host: ClientHost = "thread", connections = 1): Asker => {
    const worker = startClient(ASKER_CLIENT, { undici: require.resolve("undici"), connections }, host);
    let asking: { resolve: (latencies: number[]) => void; reject: (error: Error) => void } | undefined;
    const answered = (): typeof asking => {
        const waiting = asking;
        asking = undefined;
        return waiting;
    };
    worker.on("message", (message: { latencies?: number[]; error?: string }) =>
        message.latencies ? answered()?.resolve(message.latencies) : answered()?.reject(new Error(message.error)),
    );
    // A client that dies fails the question it had, instead of leaving it unanswered.
    worker.on("error", (error) => answered()?.reject(error));
    const ask = (urls: readonly string[], together: boolean): Promise<number[]> =>
        new Promise((resolve, reject) => {
            asking = { resolve, reject };
            worker.postMessage({ urls, together });
        });
    return {
        timeEach: (urls) => ask(urls, false),
        timeTogether: (urls) => ask(urls, true),
        close: async () => {
            const exited = new Promise((resolve) => worker.once("exit", resolve));
            worker.postMessage("close");
            await exited;
        },
    };
};

export const percentile = (sorted: number[], fraction: number): number =>
    sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];

/**
 * Runs the plan over keep-alive connections at a fixed concurrency, from a thread or a process of
 * its own (`options.host`). The client is started and its HTTP client loaded first; `beforeStart` runs
 * once they are, just before the first request, and `afterEnd` once the last answer is in, before the client is ended and its
 * latencies sorted, so that a caller measuring the window (an event-loop delay histogram) leaves
 * the thread's start and end out of it.
 */
export const runLoad = async (
    plan: LoadPlan,
    options: LoadOptions,
    beforeStart: () => void | Promise<void> = () => undefined,
    afterEnd: () => void | Promise<void> = () => undefined,
): Promise<LoadResult> => {
    const { host = "thread", ...clientOptions } = options;
    const worker = startClient(LOAD_CLIENT, { undici: require.resolve("undici"), plan, options: clientOptions }, host);
    const next = <T>(): Promise<T> =>
        new Promise<T>((resolve, reject) => {
            worker.once("message", resolve);
            worker.once("error", reject);
        });
    const first = await next<{ ready?: true; error?: string }>();
    if (first.error) {
        await worker.terminate();
        throw new Error(first.error);
    }
    await beforeStart();
    const finished = next<{
        latencies: number[];
        statuses: Record<number, number>;
        elapsed: number;
        error?: string;
    }>();
    worker.postMessage("start");
    const message = await finished;
    await afterEnd();
    await worker.terminate();
    if (message.error) {
        throw new Error(message.error);
    }
    const latencies = message.latencies.sort((a, b) => a - b);
    return {
        requests: latencies.length,
        perSecond: (latencies.length / message.elapsed) * 1000,
        p50Ms: percentile(latencies, 0.5),
        p99Ms: percentile(latencies, 0.99),
        statuses: message.statuses,
    };
};

export const formatRow = (cells: Array<string | number>): string =>
    `| ${cells.map((cell) => (typeof cell === "number" ? cell.toFixed(cell >= 100 ? 0 : 2) : cell)).join(" | ")} |`;
