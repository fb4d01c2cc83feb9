import { execFileSync } from "child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";

import { SqliteDatabase } from "../../src/store/database";
import { eventually, requestJson } from "../support/http";
import { RunningPlugin, startPlugin } from "../support/plugin-harness";
import { Receiver } from "../support/receiver";

jest.setTimeout(120_000);

interface Status {
    data: {
        storage: {
            state: string;
            file: string;
            cause: string | null;
            spool: { events: number; bytes: number; maxBytes: number; dropped: number };
        };
    };
}

const EVENTS = 500;
const NO_LIMIT = 1_000_000_000;

/** Every connection to the file: the node's thread's two and the delivery engine's (run inline for this). */
const connections = (running: RunningPlugin): SqliteDatabase[] => {
    // The engine's connection is private to it; only this test reaches in, to cap it as well.
    const inline = running.plugin.engine as unknown as { engine?: { db: SqliteDatabase } };
    if (!inline.engine) {
        throw new Error("the max_page_count test needs the delivery engine inline");
    }
    return [running.plugin.store.register, running.plugin.store.outbox, inline.engine.db];
};

const capPages = (running: RunningPlugin, pages: number | "current"): void => {
    for (const db of connections(running)) {
        const limit = pages === "current" ? (db.pragma("page_count", { simple: true }) as number) : pages;
        db.pragma(`max_page_count = ${limit}`);
    }
};

const fire = (running: RunningPlugin, from: number, to: number): void => {
    for (let height = from; height <= to; height++) {
        // The kernel awaits its listeners: a listener that throws would stop block processing.
        expect(() => running.plugin.listener.handle({ name: "block.applied", data: { height } })).not.toThrow();
    }
};

const heightsReceived = (receiver: Receiver): number[] =>
    receiver.requests
        .map((request) => JSON.parse(request.body) as { event: string; data: { height: number } })
        .filter((body) => body.event === "block.applied")
        .map((body) => body.data.height)
        .sort((a, b) => a - b);

const status = async (running: RunningPlugin): Promise<Status["data"]> =>
    (await requestJson<Status>(running.url)).body.data;

/**
 * Checks the answers of a full store, then frees it and checks that every owed event goes out once.
 * `waitingIn` is where the events owed wait meanwhile: in the spool when the journal's files refuse
 * writes (a full filesystem), in the journal when only the SQLite file does (its max_page_count).
 */
const expectDegradedThenRecovered = async (
    running: RunningPlugin,
    receiver: Receiver,
    free: () => void,
    webhookId: string,
    waitingIn: "spool" | "journal",
): Promise<void> => {
    const degraded = await eventually(async () => {
        const now = await status(running);
        return now.storage.state === "degraded" ? now : undefined;
    });
    expect(degraded.storage).toMatchObject({ state: "degraded", file: running.file });
    // On a full filesystem, whichever write failed first names the cause: the journal's or SQLite's.
    expect(degraded.storage.cause).toMatch(
        waitingIn === "spool"
            ? /ENOSPC|database or disk is full \(SQLITE_FULL\)/
            : /database or disk is full \(SQLITE_FULL\)/,
    );
    if (waitingIn === "spool") {
        expect(degraded.storage.spool.events).toBeGreaterThan(0);
    } else {
        expect(degraded.storage.spool.events).toBe(0);
        expect(running.plugin.journal.backlog()).toBeGreaterThan(0);
    }
    expect(degraded.storage.spool.dropped).toBe(0);

    // A webhook larger than any free space left in the file's pages.
    const large = Array.from({ length: 4 }, (_, index) => ({
        key: `k${index}`,
        condition: "eq",
        value: "v".repeat(4_000),
    }));
    const create = await requestJson<{ statusCode: number; message: string }>(`${running.url}/webhooks`, {
        method: "POST",
        body: { event: "block.applied", target: receiver.url, conditions: large },
    });
    // The SQLite file may still have room when only the journal's files were refused.
    if (waitingIn === "journal" || create.status !== 201) {
        expect(`${create.status} ${create.text.slice(0, 200)}`).toMatch(/^503 /);
        expect(create.body.message).toContain(`storage degraded: ${running.file}: database or disk is full`);
    }
    // A ping's one small row may still fit in a page's free space; it never answers 500.
    const ping = await requestJson(`${running.url}/webhooks/${webhookId}/ping`, { method: "POST" });
    expect([202, 503]).toContain(ping.status);
    expect((await requestJson(`${running.url}/webhooks/${webhookId}/deliveries`)).status).toBe(200);

    free();
    const pinged = ping.status === 202 ? 1 : 0;
    await eventually(async () => (receiver.requests.length >= EVENTS + 20 + pinged ? true : undefined), {
        timeoutMs: 60_000,
    });
    // Every outcome written: nothing is left that could be sent again.
    await eventually(async () => (running.plugin.outbox.pendingCount() === 0 ? true : undefined));

    // Every event once: none lost, none sent twice (an outcome that could not be written was not re-sent).
    expect(heightsReceived(receiver)).toEqual(Array.from({ length: EVENTS + 20 }, (_, index) => index + 1));
    expect(receiver.requests).toHaveLength(EVENTS + 20 + pinged);
    expect(new Set(receiver.requests.map((request) => request.headers["webhook-id"])).size).toBe(EVENTS + 20 + pinged);
    const recovered = await eventually(async () => {
        const now = await status(running);
        return now.storage.state === "ok" && now.storage.spool.events === 0 ? now : undefined;
    });
    expect(recovered.storage.spool.dropped).toBe(0);
    expect(running.logs.filter((line) => line.includes("storage degraded")).length).toBeLessThanOrEqual(3);
    expect(running.logs.some((line) => line.includes(`storage recovered: ${running.file}`))).toBe(true);
};

/**
 * Runs `test` with a 2 MB tmpfs mounted for it. Only root can mount one: as an ordinary user the
 * test says so and passes; as root (CI) it must run.
 */
const onSmallFilesystem = async (test: (mountPoint: string) => Promise<void>): Promise<void> => {
    const mountPoint = mkdtempSync(join(tmpdir(), "cww-tmpfs-"));
    try {
        execFileSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mountPoint], { stdio: "pipe" });
    } catch (error) {
        rmSync(mountPoint, { recursive: true, force: true });
        console.log(`full-filesystem test not run: mounting a tmpfs failed (${String(error)})`);
        expect(process.getuid?.()).not.toBe(0);
        return;
    }
    try {
        await test(mountPoint);
    } finally {
        execFileSync("umount", [mountPoint]);
        rmSync(mountPoint, { recursive: true, force: true });
    }
};

/** Fills the filesystem with files in a folder of their own; returns how to free them. */
const fill = (mountPoint: string): (() => void) => {
    const filler = join(mountPoint, "filler");
    mkdirSync(filler);
    for (let index = 0; ; index++) {
        try {
            writeFileSync(join(filler, String(index)), Buffer.alloc(16 * 1024));
        } catch {
            break;
        }
    }
    return () => rmSync(filler, { recursive: true, force: true });
};

/** A receiver slow enough that attempts are under way when the disk fills. */
const slowReceiver = (): Promise<Receiver> =>
    new Receiver((_request, _index, response) => {
        setTimeout(() => response.writeHead(200).end("ok"), 100);
    }).start();

/** A webhook on block.applied to the receiver, with 20 events fired and deliveries under way. */
const deliveringTo = async (running: RunningPlugin, receiver: Receiver) => {
    const webhook = await running.plugin.register.create({
        event: "block.applied",
        target: receiver.url,
        enabled: true,
        conditions: [],
        match: "any",
    });
    fire(running, 1, 20);
    await eventually(async () => (receiver.requests.length > 0 ? true : undefined));
    return webhook;
};

describe("a database that refuses writes", () => {
    let running: RunningPlugin | undefined;
    let receiver: Receiver | undefined;

    afterEach(async () => {
        await receiver?.stop();
        await running?.stop();
        running = undefined;
        receiver = undefined;
    });

    it("(max_page_count) keeps every acknowledged event, answers 503 naming the file, and recovers", async () => {
        receiver = await slowReceiver();
        running = await startPlugin({ delivery: { retryScheduleSeconds: [0.2, 0.2, 0.2] } }, { engine: "inline" });
        const webhook = await deliveringTo(running, receiver);

        capPages(running, "current");
        fire(running, 21, EVENTS + 20);

        await expectDegradedThenRecovered(running, receiver, () => capPages(running!, NO_LIMIT), webhook.id, "journal");
    });

    it("(a full filesystem) counts, logs once and shows the events dropped past the spool's bound", async () => {
        await onSmallFilesystem(async (mountPoint) => {
            try {
                receiver = await new Receiver().start();
                running = await startPlugin({ storage: { spoolMaxBytes: 20_000 } }, { dir: join(mountPoint, "data") });
                await running.plugin.register.create({
                    event: "block.applied",
                    target: receiver.url,
                    enabled: true,
                    conditions: [],
                    match: "any",
                });
                const free = fill(mountPoint);

                fire(running, 1, EVENTS);
                const { spool } = (await status(running)).storage;
                free();
                await eventually(async () => (receiver!.requests.length >= EVENTS - spool.dropped ? true : undefined));
                // Every outcome written and the spool empty: nothing is left that could be sent.
                await eventually(async () =>
                    running!.plugin.outbox.pendingCount() === 0 && (await status(running!)).storage.spool.events === 0
                        ? true
                        : undefined,
                );

                // Some events may still fit in the space left; the rest waited in the spool or were dropped.
                expect(spool.dropped).toBeGreaterThan(0);
                expect(spool.events).toBeGreaterThan(0);
                expect(receiver.requests).toHaveLength(EVENTS - spool.dropped);
                expect((await status(running)).storage.spool.dropped).toBe(spool.dropped);
                expect(
                    running.logs.filter((line) => line.includes("dropped the deliveries of a block.applied event")),
                ).toHaveLength(1);
            } finally {
                await receiver?.stop();
                await running?.stop();
                running = undefined;
                receiver = undefined;
            }
        });
    });

    it("(a full filesystem) keeps every acknowledged event, answers 503 naming the file, and recovers", async () => {
        await onSmallFilesystem(async (mountPoint) => {
            try {
                receiver = await slowReceiver();
                running = await startPlugin(
                    { delivery: { retryScheduleSeconds: [0.2, 0.2, 0.2] } },
                    { dir: join(mountPoint, "data") },
                );
                const webhook = await deliveringTo(running, receiver);
                const free = fill(mountPoint);
                fire(running, 21, EVENTS + 20);

                await expectDegradedThenRecovered(running, receiver, free, webhook.id, "spool");
            } finally {
                await receiver?.stop();
                await running?.stop();
                running = undefined;
                receiver = undefined;
            }
        });
    });
});
