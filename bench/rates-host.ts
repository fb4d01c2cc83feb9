/**
 * One webhook plugin in a host process of its own, as a node hosts it: a core-kernel event
 * dispatcher with the plugin's listener on "*". Driven by bench/rates.ts over IPC: it dispatches
 * transaction.applied events at a given rate (or all at once), each carrying the wall-clock time
 * (ms, with fractions) at which it was dispatched, so the receiver can tell each delivery's latency.
 * argv: "ours" | "ark" | "ceiling", then the receivers' URLs as JSON, one per webhook.
 */
import "reflect-metadata";

import { loadCompiledPlugin } from "./compiled-plugin";
loadCompiledPlugin();

import { Container, Contracts, Services } from "@arkecosystem/core-kernel";
import { randomUUID } from "crypto";
import { mkdtempSync, rmSync } from "fs";
import { Agent, request } from "http";
import { tmpdir } from "os";
import { join } from "path";
import { performance } from "perf_hooks";

import { freePort } from "../__tests__/support/ports";
import { startPlugin } from "../__tests__/support/plugin-harness";
import { heardBesides } from "../src/events/kernel-listeners";
import { startArkWebhooks } from "./ark-webhooks";
import { profileThreads } from "./thread-profiles";

export type Plugin = "ours" | "ark" | "ceiling";

export interface FeedPlan {
    events: number;
    /** Events a second; 0 dispatches them all at once. */
    ratePerSecond: number;
}

export type ToRatesHost = { kind: "feed"; plan: FeedPlan } | { kind: "finish" };
export type FromRatesHost = { kind: "ready" } | { kind: "fed"; firstAt: number };

const EVENT = "transaction.applied";
const [which, targetsJson] = process.argv.slice(2) as [Plugin, string];
const targets = JSON.parse(targetsJson) as string[];
profileThreads();
const send = (message: FromRatesHost): void => void process.send?.(message);
const wallClock = (): number => performance.timeOrigin + performance.now();

type Dispatch = (name: string, data: unknown) => void;

const kernelDispatcher = () => {
    const container = new Container.Container();
    container.bind("events").to(Services.Events.MemoryEventDispatcher).inSingletonScope();
    return container.get<Services.Events.MemoryEventDispatcher>("events");
};

/**
 * The least a plugin can do: for each webhook on the event's name, POST the JSON body at once over
 * a keep-alive agent of 32 sockets. No persistence, no signing, no retries.
 */
const bootCeiling = (): { dispatch: Dispatch; stop: () => Promise<void> } => {
    const events = kernelDispatcher();
    const agent = new Agent({ keepAlive: true, maxSockets: 32 });
    events.listen("*", {
        handle: ({ name, data }: { name: string; data: unknown }) => {
            if (name !== EVENT) {
                return;
            }
            const body = JSON.stringify({ timestamp: Date.now(), event: name, data });
            for (const target of targets) {
                const post = request(target, {
                    method: "POST",
                    agent,
                    headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
                });
                post.on("response", (response) => response.resume());
                post.on("error", () => undefined);
                post.end(body);
            }
        },
    });
    return {
        dispatch: (name, data) => void events.dispatch(name, data),
        stop: async () => agent.destroy(),
    };
};

const boot = async (dir: string): Promise<{ dispatch: Dispatch; stop: () => Promise<void> }> => {
    if (which === "ceiling") {
        return bootCeiling();
    }
    if (which === "ark") {
        const seed = targets.map((target) => ({
            id: randomUUID(),
            event: EVENT,
            target,
            enabled: true,
            conditions: [],
            token: randomUUID(),
        }));
        const ark = await startArkWebhooks(dir, await freePort(), seed, true);
        const events = ark.app.get<Services.Events.MemoryEventDispatcher>(Container.Identifiers.EventDispatcherService);
        return { dispatch: (name, data) => void events.dispatch(name, data), stop: () => ark.stop() };
    }
    const events = kernelDispatcher();
    // As in a node: announcements go to the kernel when a listener besides the plugin's hears them.
    const own: { listener?: Contracts.Kernel.EventListener } = {};
    const running = await startPlugin(
        { server: { whitelist: ["127.0.0.1"] } },
        {
            dir,
            dispatchEvent: (name, data) => void events.dispatch(name, data),
            isHeard: heardBesides(events, () => own.listener),
        },
    );
    for (const target of targets) {
        await running.plugin.register.create({ event: EVENT, target, enabled: true, conditions: [], match: "any" });
    }
    own.listener = running.plugin.listener;
    const unlisten = events.listen("*", running.plugin.listener);
    return {
        dispatch: (name, data) => void events.dispatch(name, data),
        stop: async () => {
            unlisten();
            await running.stop({ keepFiles: true });
        },
    };
};

const next = (): Promise<ToRatesHost> => new Promise((resolve) => process.once("message", resolve));

/** Dispatches the plan's events on time: at each turn, every event whose moment has come. */
const feed = async (dispatch: Dispatch, { events, ratePerSecond }: FeedPlan): Promise<number> => {
    const firstAt = wallClock();
    const started = performance.now();
    let sequence = 0;
    while (sequence < events) {
        const due =
            ratePerSecond === 0
                ? events
                : Math.min(events, Math.floor(((performance.now() - started) * ratePerSecond) / 1000) + 1);
        for (; sequence < due; sequence++) {
            dispatch(EVENT, { id: `${randomUUID()}`.replace(/-/g, ""), sequence, sentAt: wallClock() });
        }
        if (sequence < events) {
            await new Promise((resolve) => setTimeout(resolve, 1));
        }
    }
    return firstAt;
};

const main = async (): Promise<void> => {
    const dir = mkdtempSync(join(tmpdir(), "cww-bench-rates-"));
    const { dispatch, stop } = await boot(dir);
    send({ kind: "ready" });
    for (;;) {
        const message = await next();
        if (message.kind === "finish") {
            break;
        }
        send({ kind: "fed", firstAt: await feed(dispatch, message.plan) });
    }
    await stop();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
};

main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
});
