import { randomUUID } from "crypto";
import { mkdtempSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { performance } from "perf_hooks";

import { eventually } from "../__tests__/support/http";
import { freePort } from "../__tests__/support/ports";
import { DeepPartial, RunningPlugin, startPlugin } from "../__tests__/support/plugin-harness";
import { PluginOptions } from "../src/config/options";
import { Receiver } from "../__tests__/support/receiver";
import { ArkWebhooks, startArkWebhooks } from "./ark-webhooks";
import { formatRow, percentile } from "./load";

const EVENTS = 5_000;
const SPREAD_MS = 10_000;
const SETTLE_LIMIT_MS = 60_000;

type Scenario = "burst" | "down 40 %";

interface Counted {
    received: number;
    distinctEvents: number;
    seconds: number;
}

/** Feeds the events (all at once, or over SPREAD_MS with the receiver down for its middle 40 %). */
const run = async (
    scenario: Scenario,
    receiver: Receiver,
    handle: (event: { name: string; data: unknown }) => unknown,
    settled: () => boolean,
): Promise<Counted> => {
    const port = receiver.port;
    const started = performance.now();
    if (scenario === "burst") {
        for (let height = 1; height <= EVENTS; height++) {
            void handle({ name: "block.applied", data: { height } });
        }
    } else {
        for (let height = 1; height <= EVENTS; height++) {
            const at = (height / EVENTS) * SPREAD_MS;
            const elapsed = performance.now() - started;
            if (at > elapsed) {
                await new Promise((resolve) => setTimeout(resolve, at - elapsed));
            }
            if (height === Math.round(EVENTS * 0.3)) {
                await receiver.stop();
            }
            if (height === Math.round(EVENTS * 0.7)) {
                await receiver.start(port);
            }
            void handle({ name: "block.applied", data: { height } });
        }
    }
    await eventually(async () => (settled() ? true : undefined), { timeoutMs: SETTLE_LIMIT_MS, intervalMs: 200 }).catch(
        () => undefined,
    );
    const heights = new Set(
        receiver.requests.map((request) => (JSON.parse(request.body) as { data: { height: number } }).data.height),
    );
    return {
        received: receiver.requests.length,
        distinctEvents: heights.size,
        seconds: (performance.now() - started) / 1000,
    };
};

const SLOW_EVENTS = 2_000;
const SLOW_RATE = 200;
const SLOW_ANSWER_MS = 250;

/** Events at SLOW_RATE a second to a receiver that answers 200 after SLOW_ANSWER_MS. */
const runSlowReceiver = async (
    handle: (event: { name: string; data: unknown }) => unknown,
    receiver: Receiver,
): Promise<{ delivered: number; seconds: number }> => {
    const started = performance.now();
    const startedAt = Date.now();
    for (let height = 1; height <= SLOW_EVENTS; height++) {
        const at = ((height - 1) / SLOW_RATE) * 1000;
        const elapsed = performance.now() - started;
        if (at > elapsed) {
            await new Promise((resolve) => setTimeout(resolve, at - elapsed));
        }
        void handle({ name: "block.applied", data: { height } });
    }
    const distinct = (): number =>
        new Set(
            receiver.requests.map((request) => (JSON.parse(request.body) as { data: { height: number } }).data.height),
        ).size;
    await eventually(async () => (distinct() === SLOW_EVENTS ? true : undefined), {
        timeoutMs: SETTLE_LIMIT_MS,
        intervalMs: 200,
    }).catch(() => undefined);
    const last = Math.max(...receiver.requests.map((request) => request.receivedAt));
    return { delivered: distinct(), seconds: (last - startedAt) / 1000 };
};

const slowReceiver = (): Receiver =>
    new Receiver((_request, _index, response) => {
        setTimeout(() => response.writeHead(200).end("ok"), SLOW_ANSWER_MS);
    });

/** Our plugin with one webhook on block.applied to the receiver, with these delivery options. */
const oursDeliveringTo = async (
    receiver: Receiver,
    delivery: DeepPartial<PluginOptions["delivery"]> = {},
): Promise<RunningPlugin> => {
    const ours = await startPlugin({ server: { whitelist: ["127.0.0.1"] }, delivery });
    await ours.plugin.register.create({
        event: "block.applied",
        target: receiver.url,
        enabled: true,
        conditions: [],
        match: "any",
    });
    return ours;
};

/** ARK's plugin with one webhook on block.applied to the receiver, for the length of `body`. */
const withArkWebhooksTo = async <T>(receiver: Receiver, body: (ark: ArkWebhooks) => Promise<T>): Promise<T> => {
    const dir = mkdtempSync(join(tmpdir(), "cww-bench-ark-"));
    const seed = [
        {
            id: randomUUID(),
            event: "block.applied",
            target: receiver.url,
            enabled: true,
            conditions: [],
            token: randomUUID(),
        },
    ];
    const ark = await startArkWebhooks(dir, await freePort(), seed, true);
    try {
        return await body(ark);
    } finally {
        await ark.stop();
        rmSync(dir, { recursive: true, force: true });
    }
};

/** The slow but healthy receiver, ours and ARK's. */
const benchSlowReceiver = async (): Promise<string[]> => {
    const receiver = await slowReceiver().start(await freePort());
    const ours = await oursDeliveringTo(receiver);
    const mine = await runSlowReceiver((event) => ours.plugin.listener.handle(event), receiver);
    const concurrency = (await ours.plugin.engine.origins())[0]?.concurrency ?? 0;
    await ours.stop();
    await receiver.stop();

    const arkReceiver = await slowReceiver().start(await freePort());
    const theirs = await withArkWebhooksTo(arkReceiver, (ark) =>
        runSlowReceiver((event) => ark.listener.handle(event), arkReceiver),
    );
    await arkReceiver.stop();
    return [
        "",
        `A slow but healthy receiver: ${SLOW_EVENTS.toLocaleString("en")} events at ${SLOW_RATE}/s to a receiver that answers 200 after ${SLOW_ANSWER_MS} ms; seconds from the first event to the last delivery (up to ${SETTLE_LIMIT_MS / 1000} s)`,
        "",
        "| plugin | events delivered | seconds | connections to the receiver at the end |",
        "|---|---|---|---|",
        formatRow(["ARK core-webhooks", theirs.delivered, theirs.seconds, "one per delivery"]),
        formatRow(["ours", mine.delivered, mine.seconds, String(concurrency)]),
    ];
};

// A receiver that changes pace: it answers at once, then for a spell takes longer than the
// timeout, then is healthy again but slower than at first.
const PACE_RATE = 200;
const PACE_TIMEOUT_MS = 1_500;
const PACE_PHASES = [
    { name: "quick", seconds: 1, answerMs: 0 },
    { name: "slow spell", seconds: 5, answerMs: 3_000 },
    { name: "healthy at 250 ms", seconds: 10, answerMs: 250 },
] as const;
const PACE_WINDOW_MS = 30_000;

interface PaceFigures {
    newEvents: number;
    newDelivered: number;
    spellDelivered: number;
    spellEvents: number;
    /** Answered 200 a second while the receiver was healthy at 250 ms (the new events' phase and after). */
    ratePerSecond: number;
    p50Ms: number;
    p99Ms: number;
}

/** Feeds the phases at PACE_RATE, then waits PACE_WINDOW_MS from the first new event. */
const runChangeOfPace = async (
    handle: (event: { name: string; data: unknown }) => unknown,
    receiver: Receiver,
): Promise<PaceFigures> => {
    const dispatchedAt = new Map<number, number>();
    const phaseOf = new Map<number, string>();
    let height = 0;
    let newStartedAt = 0;
    for (const phase of PACE_PHASES) {
        receiver.behaviour = (_request, _index, response) => {
            setTimeout(() => {
                if (!response.destroyed) {
                    response.writeHead(200).end("ok");
                }
            }, phase.answerMs);
        };
        const started = performance.now();
        if (phase.name === "healthy at 250 ms") {
            newStartedAt = Date.now();
        }
        for (let index = 0; index < phase.seconds * PACE_RATE; index++) {
            const at = (index / PACE_RATE) * 1000;
            const elapsed = performance.now() - started;
            if (at > elapsed) {
                await new Promise((resolve) => setTimeout(resolve, at - elapsed));
            }
            height++;
            dispatchedAt.set(height, Date.now());
            phaseOf.set(height, phase.name);
            void handle({ name: "block.applied", data: { height } });
        }
    }
    const remaining = newStartedAt + PACE_WINDOW_MS - Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, remaining)));
    // A request received once the receiver answered in 250 ms, and within the window, was answered 200.
    const answered = receiver.requests.filter(
        (request) => request.receivedAt >= newStartedAt && request.receivedAt <= newStartedAt + PACE_WINDOW_MS - 250,
    );
    const firstDelivery = new Map<number, number>();
    for (const request of answered) {
        const { height: delivered } = (JSON.parse(request.body) as { data: { height: number } }).data;
        if (!firstDelivery.has(delivered)) {
            firstDelivery.set(delivered, request.receivedAt + 250);
        }
    }
    const countOf = (name: string): number => [...phaseOf.values()].filter((phase) => phase === name).length;
    const deliveredOf = (name: string): number =>
        [...firstDelivery.keys()].filter((at) => phaseOf.get(at) === name).length;
    const latencies = [...firstDelivery]
        .filter(([delivered]) => phaseOf.get(delivered) === "healthy at 250 ms")
        .map(([delivered, at]) => at - (dispatchedAt.get(delivered) ?? at))
        .sort((left, right) => left - right);
    const lastAnswer = Math.max(newStartedAt + 1, ...answered.map((request) => request.receivedAt + 250));
    return {
        newEvents: countOf("healthy at 250 ms"),
        newDelivered: deliveredOf("healthy at 250 ms"),
        spellEvents: countOf("slow spell"),
        spellDelivered: deliveredOf("slow spell"),
        ratePerSecond: (answered.length * 1000) / (lastAnswer - newStartedAt),
        p50Ms: percentile(latencies, 0.5),
        p99Ms: percentile(latencies, 0.99),
    };
};

/** The receiver that changes pace, ours and ARK's (whose attempts time out at 1.5 s too). */
export const benchChangeOfPace = async (): Promise<string[]> => {
    const receiver = await new Receiver().start(await freePort());
    const ours = await oursDeliveringTo(receiver, { timeoutMs: PACE_TIMEOUT_MS });
    const mine = await runChangeOfPace((event) => ours.plugin.listener.handle(event), receiver);
    await ours.stop();
    await receiver.stop();

    const arkReceiver = await new Receiver().start(await freePort());
    const theirs = await withArkWebhooksTo(arkReceiver, (ark) =>
        runChangeOfPace((event) => ark.listener.handle(event), arkReceiver),
    );
    await arkReceiver.stop();
    const row = (name: string, figures: PaceFigures): string =>
        formatRow([
            name,
            `${figures.newDelivered.toLocaleString("en")} of ${figures.newEvents.toLocaleString("en")}`,
            `${figures.spellDelivered.toLocaleString("en")} of ${figures.spellEvents.toLocaleString("en")}`,
            figures.ratePerSecond,
            figures.p50Ms,
            figures.p99Ms,
        ]);
    return [
        "",
        `A receiver that changes pace: ${PACE_RATE} events/s; it answers at once for ${PACE_PHASES[0].seconds} s, then in ${PACE_PHASES[1].answerMs / 1000} s for ${PACE_PHASES[1].seconds} s (attempts time out at ${PACE_TIMEOUT_MS / 1000} s), then in ${PACE_PHASES[2].answerMs} ms for the last ${PACE_PHASES[2].seconds} s of events; counted ${PACE_WINDOW_MS / 1000} s from the first of those`,
        "",
        "| plugin | new events delivered | the spell's events delivered | answered/s while healthy at 250 ms | new events: dispatch → delivery p50 (ms) | p99 (ms) |",
        "|---|---|---|---|---|---|",
        row("ARK core-webhooks", theirs),
        row("ours", mine),
    ];
};

/** 5,000 block.applied events to one webhook and a local receiver, ours and ARK's. */
export const benchDelivery = async (): Promise<string[]> => {
    const rows = [
        `Delivery: ${EVENTS.toLocaleString("en")} events to one webhook with a local receiver; "down 40 %" spreads them over ${SPREAD_MS / 1000} s and stops the receiver for the middle 40 %; each run waits up to ${SETTLE_LIMIT_MS / 1000} s for the last delivery`,
        "",
        "| scenario | plugin | events delivered | lost | requests received | distinct webhook-ids | seconds | deliveries/s |",
        "|---|---|---|---|---|---|---|---|",
    ];
    for (const scenario of ["burst", "down 40 %"] as Scenario[]) {
        const receiver = await new Receiver().start(await freePort());
        const ours = await oursDeliveringTo(receiver, { retryScheduleSeconds: [1, 2, 5, 10, 30] });
        const mine = await run(
            scenario,
            receiver,
            (event) => ours.plugin.listener.handle(event),
            () =>
                ours.plugin.listener.stats.eventsSeen === EVENTS &&
                ours.plugin.journal.backlog() === 0 &&
                ours.plugin.outbox.pendingCount() === 0,
        );
        const ids = new Set(receiver.requests.map((request) => String(request.headers["webhook-id"]))).size;
        await ours.stop();
        await receiver.stop();

        const arkReceiver = await new Receiver().start(await freePort());
        let inFlight = 0;
        const theirs = await withArkWebhooksTo(arkReceiver, (ark) =>
            run(
                scenario,
                arkReceiver,
                (event) => {
                    inFlight++;
                    return Promise.resolve(ark.listener.handle(event)).finally(() => inFlight--);
                },
                () => inFlight === 0,
            ),
        );
        await arkReceiver.stop();

        rows.push(
            formatRow([
                scenario,
                "ARK core-webhooks",
                theirs.distinctEvents,
                EVENTS - theirs.distinctEvents,
                theirs.received,
                "none sent",
                theirs.seconds,
                theirs.distinctEvents / theirs.seconds,
            ]),
            formatRow([
                scenario,
                "ours",
                mine.distinctEvents,
                EVENTS - mine.distinctEvents,
                mine.received,
                ids,
                mine.seconds,
                mine.distinctEvents / mine.seconds,
            ]),
        );
    }
    rows.push(...(await benchSlowReceiver()));
    rows.push(...(await benchChangeOfPace()));
    return rows;
};
