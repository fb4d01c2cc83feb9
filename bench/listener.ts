import { regexp as arkRegexp } from "@arkecosystem/core-webhooks/dist/conditions";
import { randomUUID } from "crypto";
import { mkdtempSync, readdirSync, rmSync, statSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { performance } from "perf_hooks";

import { freePort } from "../__tests__/support/ports";
import { startPlugin } from "../__tests__/support/plugin-harness";
import { Receiver } from "../__tests__/support/receiver";
import { Condition } from "../src/contracts";
import { EVENT_CATALOGUE } from "../src/events/catalogue";
import { RegexpPool } from "../src/events/regexp-pool";
import { compileMatcher } from "../src/events/matcher";
import { startArkWebhooks } from "./ark-webhooks";
import { formatRow, percentile } from "./load";

const WEBHOOKS = 1_000;
const EVENT_NAMES = 50;
const EVENTS = 20_000;
const ARK_TIME_LIMIT_MS = 20_000;

interface ListenerRun {
    events: number;
    perSecond: number;
    p50Ms: number;
    p99Ms: number;
}

/** Feeds events to a listener one at a time, as the kernel does (it awaits each listener). */
const feed = async (
    handle: (event: { name: string; data: unknown }) => unknown,
    names: string[],
    timeLimitMs: number,
    turnEventLoop: boolean,
): Promise<ListenerRun> => {
    const durations: number[] = [];
    const started = performance.now();
    for (let index = 0; index < EVENTS && performance.now() - started < timeLimitMs; index++) {
        const event = {
            name: names[index % names.length],
            data: { height: index, amount: String((index * 7919) % 1_000_000_000) },
        };
        const begin = performance.now();
        await handle(event);
        durations.push(performance.now() - begin);
        if (turnEventLoop) {
            // The node does other work between events: here the dispatcher delivers what is owed.
            await new Promise((resolve) => setImmediate(resolve));
        }
    }
    const elapsed = performance.now() - started;
    durations.sort((a, b) => a - b);
    return {
        events: durations.length,
        perSecond: (durations.length / elapsed) * 1000,
        p50Ms: percentile(durations, 0.5),
        p99Ms: percentile(durations, 0.99),
    };
};

/** The longest synchronous run of one regexp condition on a 30-character input, in milliseconds. */
const regexpStall = (): { ours: number; ark: number } => {
    const pattern = "(a+)+$";
    const input = `${"a".repeat(27)}!!!`;
    const matcher = compileMatcher([{ key: "vendorField", condition: "regexp", value: pattern }], "any", {
        regexpInputChars: 1024,
        regexps: new RegexpPool(100),
    });
    let begin = performance.now();
    matcher.test({ vendorField: input });
    const ours = performance.now() - begin;
    begin = performance.now();
    arkRegexp(input, pattern);
    return { ours, ark: performance.now() - begin };
};

// The register at scale: one webhook per user on transaction.applied, each with a condition that
// the fed events never meet, beside as many webhooks without conditions.
const SCALES = (process.env.BENCH_LISTENER_SCALES ?? "10000,100000").split(",").map(Number);
const SCALE_BLOCKS = 5;
const BLOCK_EVENTS = 150;
const SCALE_BATCH = 500;

type ScaleKind = "no conditions" | "`recipientId eq`" | "`amount gt`";

const scaleConditions = (kind: ScaleKind, index: number): Condition[] => {
    switch (kind) {
        case "no conditions":
            return [];
        case "`recipientId eq`":
            return [{ key: "recipientId", condition: "eq", value: `AUser${String(index).padStart(29, "0")}` }];
        case "`amount gt`":
            return [{ key: "amount", condition: "gt", value: String(1_000_000_000_000 + index) }];
    }
};

const folderBytes = (folder: string): number => {
    try {
        return readdirSync(folder).reduce((total, name) => total + statSync(join(folder, name)).size, 0);
    } catch {
        return 0;
    }
};

interface ScaleRow {
    kind: ScaleKind;
    webhooks: number;
    p50Ms: number;
    p99Ms: number;
    longestBlockMs: number;
    journalBytesPerEvent: number;
}

/** Blocks of 150 transaction.applied events, dispatched one by one in one turn of the loop, as the node does. */
const benchScale = async (kind: ScaleKind, webhooks: number): Promise<ScaleRow> => {
    const ours = await startPlugin({ server: { whitelist: ["127.0.0.1"] } });
    try {
        for (let first = 0; first < webhooks; first += SCALE_BATCH) {
            await Promise.all(
                Array.from({ length: Math.min(SCALE_BATCH, webhooks - first) }, (_, offset) =>
                    ours.plugin.register.create({
                        event: "transaction.applied",
                        target: "http://127.0.0.1:9/hook",
                        enabled: true,
                        conditions: scaleConditions(kind, first + offset),
                        match: "any",
                    }),
                ),
            );
        }
        // The index is made again in the turn after the register changed.
        await new Promise((resolve) => setImmediate(resolve));
        const journal = `${ours.file}.events`;
        const bytesBefore = folderBytes(journal);
        const durations: number[] = [];
        let longestBlockMs = 0;
        for (let block = 0; block < SCALE_BLOCKS; block++) {
            const blockStarted = performance.now();
            for (let index = 0; index < BLOCK_EVENTS; index++) {
                const data = {
                    id: randomUUID().replace(/-/g, "").repeat(2),
                    recipientId: `ANobody${String(index).padStart(27, "0")}`,
                    amount: String(1 + index),
                };
                const begin = performance.now();
                ours.plugin.listener.handle({ name: "transaction.applied", data });
                durations.push(performance.now() - begin);
            }
            longestBlockMs = Math.max(longestBlockMs, performance.now() - blockStarted);
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
        durations.sort((a, b) => a - b);
        return {
            kind,
            webhooks,
            p50Ms: percentile(durations, 0.5),
            p99Ms: percentile(durations, 0.99),
            longestBlockMs,
            journalBytesPerEvent: (folderBytes(journal) - bytesBefore) / (SCALE_BLOCKS * BLOCK_EVENTS),
        };
    } finally {
        await ours.stop();
    }
};

/** The listener with 10,000 and 100,000 webhooks on one event: `npm run bench -- listener-scale`. */
export const benchListenerScale = async (): Promise<string[]> => {
    const rows: ScaleRow[] = [];
    for (const webhooks of SCALES) {
        for (const kind of ["no conditions", "`recipientId eq`", "`amount gt`"] as ScaleKind[]) {
            rows.push(await benchScale(kind, webhooks));
        }
    }
    return [
        `Listener at scale: N webhooks on transaction.applied, each with a condition the events never meet (or none), ${SCALE_BLOCKS} blocks of ${BLOCK_EVENTS} events dispatched one by one in one turn of the loop:`,
        "",
        "| webhooks | conditions | listener per event p50 / p99 (ms) | a block of 150 on the node's loop, longest (ms) | journal bytes per event |",
        "|---|---|---|---|---|",
        ...rows.map((row) =>
            formatRow([
                row.webhooks.toLocaleString("en"),
                row.kind,
                `${row.p50Ms.toFixed(3)} / ${row.p99Ms.toFixed(3)}`,
                row.longestBlockMs,
                Math.round(row.journalBytesPerEvent),
            ]),
        ),
    ];
};

/** Listener cost with deliveries pending, ours and ARK's, and the regexp stall. */
export const benchListener = async (): Promise<string[]> => {
    const receiver = await new Receiver().start();
    const names = EVENT_CATALOGUE.map((entry) => entry.name).slice(0, EVENT_NAMES);
    const seed = Array.from({ length: WEBHOOKS }, (_, index) => ({
        id: randomUUID(),
        event: names[index % names.length],
        target: receiver.url,
        enabled: true,
        conditions: [
            { key: "amount", condition: "gt", value: String((index * 104_729) % 1_000_000_000) },
        ] as Condition[],
        token: randomUUID().replace(/-/g, ""),
    }));

    const runs: Array<{
        mode: string;
        ark: ListenerRun;
        ours: ListenerRun;
        queued: number;
        received: number;
        pending: number;
        journaled: number;
    }> = [];
    for (const [mode, turnEventLoop] of [
        ["back to back", false],
        ["event loop turning between events", true],
    ] as const) {
        receiver.requests.length = 0;
        const ours = await startPlugin({ server: { whitelist: ["127.0.0.1"] } });
        await Promise.all(seed.map((row) => ours.plugin.register.create({ ...row, match: "any" })));
        const mine = await feed(
            (event) => ours.plugin.listener.handle(event),
            names,
            Number.POSITIVE_INFINITY,
            turnEventLoop,
        );
        const queued = ours.plugin.listener.stats.deliveriesQueued;
        const pending = ours.plugin.outbox.pendingCount();
        const journaled = ours.plugin.journal.backlog();
        const received = receiver.requests.length;
        await ours.stop();

        receiver.requests.length = 0;
        const dir = mkdtempSync(join(tmpdir(), "cww-bench-ark-"));
        const ark = await startArkWebhooks(dir, await freePort(), seed, true);
        const theirs = await feed((event) => ark.listener.handle(event), names, ARK_TIME_LIMIT_MS, turnEventLoop);
        await ark.stop();
        rmSync(dir, { recursive: true, force: true });
        runs.push({ mode, ark: theirs, ours: mine, queued, received, pending, journaled });
    }
    await receiver.stop();

    const stall = regexpStall();
    return [
        `Listener: ${WEBHOOKS.toLocaleString("en")} webhooks over ${EVENT_NAMES} event names (about 13 match each event), up to ${EVENTS.toLocaleString("en")} events fed one at a time as the kernel does (ARK capped at ${ARK_TIME_LIMIT_MS / 1000} s), a local receiver answering 200. "Back to back": the next event as soon as the listener returns; "event loop turning": one turn of the event loop between events, so that deliveries go out meanwhile.`,
        "",
        "| mode | listener | events handled | events/s | p50 ms per event | p99 ms per event | ratio (events/s) |",
        "|---|---|---|---|---|---|---|",
        ...runs.flatMap(({ mode, ark, ours }) => [
            formatRow([mode, "ARK core-webhooks", ark.events, ark.perSecond, ark.p50Ms, ark.p99Ms, ""]),
            formatRow([
                mode,
                "ours",
                ours.events,
                ours.perSecond,
                ours.p50Ms,
                ours.p99Ms,
                `${(ours.perSecond / ark.perSecond).toFixed(1)}×`,
            ]),
        ]),
        "",
        ...runs.map(
            ({ mode, queued, received, pending, journaled }) =>
                `${mode}: ours queued ${queued.toLocaleString("en")} deliveries; when the run ended the receiver had ${received.toLocaleString("en")}, ${pending.toLocaleString("en")} were pending in the outbox and ${journaled.toLocaleString("en")} events were still journaled, their deliveries not yet written out.`,
        ),
        "",
        "| regexp `(a+)+$` on a 30-character input | longest event-loop stall ms |",
        "|---|---|",
        formatRow(["ARK core-webhooks (JavaScript RegExp)", stall.ark]),
        formatRow(["ours (RE2)", stall.ours]),
    ];
};
