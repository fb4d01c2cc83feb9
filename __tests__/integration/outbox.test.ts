import { execFileSync } from "child_process";
import { randomUUID } from "crypto";
import { copyFileSync, mkdtempSync, readdirSync, readlinkSync, renameSync, rmSync, statSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";

import BetterSqlite3 from "better-sqlite3";

import { Checkpointer } from "../../src/store/checkpointer";
import { openStore, resumeAutoCheckpoints, StoreConnections } from "../../src/store/database";
import { JournalExpander } from "../../src/delivery/journal-expander";
import { AttemptOutcome, DeliveryStore } from "../../src/store/delivery-store";
import { journalCursorOf, JournalReader } from "../../src/store/journal-reader";
import { journalFolderOf } from "../../src/store/journal-segments";
import { JournalWriter } from "../../src/store/journal-writer";
import { MIGRATIONS } from "../../src/store/migrations";
import { eventually } from "../support/http";
import { addWebhookRow } from "../support/webhook-rows";

/** The journal's files beside the store's file, as the listener writes them. */
const journalFolder = (store: StoreConnections): string => journalFolderOf(store.outbox.name);

const journalEvent = (store: StoreConnections, webhookIds: string[], height: number): string[] => {
    const deliveries = webhookIds.map((webhookId) => ({ id: randomUUID(), webhookId }));
    const writer = new JournalWriter({
        folder: journalFolder(store),
        segmentBytes: 64 * 1024 * 1024,
        readCursor: journalCursorOf(store.outbox),
    });
    writer.append({
        event: "block.applied",
        body: JSON.stringify({ timestamp: height, event: "block.applied", data: { height } }),
        createdAt: height,
        deliveries,
        deferred: [],
    });
    writer.close();
    return deliveries.map((delivery) => delivery.id);
};

const readerOf = (store: StoreConnections): JournalReader => {
    const fail = (what: string) => () => {
        throw new Error(`the journal's files are whole here: ${what}`);
    };
    return new JournalReader(store.outbox, {
        folder: journalFolder(store),
        onSkipped: fail("skipped"),
        onDamaged: fail("damaged"),
        onSegmentLost: fail("segment lost"),
        onGroupLost: fail("group lost"),
        onGroupUnreadable: fail("group unreadable"),
        onUnreadableGroupsPassed: () => undefined,
    });
};

/** How many journaled events wait to be expanded. */
const journalBacklog = (store: StoreConnections): number => {
    const journal = readerOf(store);
    const waiting = journal.oldest(1_000).length;
    journal.close();
    return waiting;
};

/** Moves the whole journal into delivery rows, as the dispatcher does at the start of each pass. */
const expand = (store: StoreConnections): void => {
    const journal = readerOf(store);
    const expander = new JournalExpander({ journal, matcherOf: () => undefined, now: () => 0 });
    expect(expander.expand(Infinity).drained).toBe(true);
    journal.close();
};

const load = (outbox: DeliveryStore, webhookId: string, id: string) => outbox.find(webhookId, id);

/** A delivery's first attempt as its last: delivered (or dead) at `at`. */
const lastAttempt = (deliveryId: string, at: number, status: "delivered" | "dead" = "delivered"): AttemptOutcome => ({
    attempt: {
        deliveryId,
        number: 1,
        startedAt: at,
        durationMs: 0,
        statusCode: 200,
        error: null,
        responseExcerpt: "ok",
    },
    status,
    nextAttemptAt: null,
});

/** Records a delivery's first attempt as its last. */
const finish = (
    outbox: DeliveryStore,
    deliveryId: string,
    at: number,
    status: "delivered" | "dead" = "delivered",
): void => outbox.recordAll([lastAttempt(deliveryId, at, status)]);

describe("the listener's journal", () => {
    let dir: string;
    let file: string;

    beforeEach(() => {
        dir = mkdtempSync(join(tmpdir(), "cww-journal-"));
        file = join(dir, "webhooks.sqlite");
    });

    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it("keeps journaled events across a close that never expanded them, and expands them into due deliveries", () => {
        const first = openStore(file);
        const hooks = [addWebhookRow(first), addWebhookRow(first)];
        const ids = [...journalEvent(first, hooks, 1), ...journalEvent(first, hooks, 2)];
        first.close();

        const second = openStore(file);
        try {
            const outbox = new DeliveryStore(second.outbox);
            expect(outbox.pendingCount()).toBe(0);
            expect(journalBacklog(second)).toBe(2);
            expand(second);
            expect(outbox.pendingCount()).toBe(4);
            const dueOfEach = hooks.map((hook) => outbox.dueOf(hook, 10, 100).map((delivery) => delivery.id));
            expect(dueOfEach).toEqual([
                [ids[0], ids[2]],
                [ids[1], ids[3]],
            ]);
            expect(outbox.pendingWebhookIds().sort()).toEqual([...hooks].sort());
            expect(load(outbox, hooks[0], ids[2])).toMatchObject({
                webhookId: hooks[0],
                status: "pending",
                attempts: 0,
            });
            expect(JSON.parse(load(outbox, hooks[0], ids[2])?.body ?? "{}").data.height).toBe(2);
            expect(journalBacklog(second)).toBe(0);
        } finally {
            second.close();
        }
    });

    it("owes nothing to a webhook deleted between the event and its expansion", () => {
        const store = openStore(file);
        try {
            const outbox = new DeliveryStore(store.outbox);
            const [kept, deleted] = [addWebhookRow(store), addWebhookRow(store)];
            const [keptDelivery] = journalEvent(store, [kept, deleted], 1);
            store.register.prepare("DELETE FROM webhooks WHERE id = ?").run(deleted);
            expand(store);

            expect(outbox.pendingWebhookIds()).toEqual([kept]);
            expect(outbox.dueOf(kept, 10, 100).map((delivery) => delivery.id)).toEqual([keptDelivery]);
        } finally {
            store.close();
        }
    });

    it("writes the rest of a commit after events whose every webhook was deleted, and keeps no body for them", () => {
        const store = openStore(file);
        try {
            const outbox = new DeliveryStore(store.outbox);
            const [kept, first, second] = [addWebhookRow(store), addWebhookRow(store), addWebhookRow(store)];
            journalEvent(store, [first, second], 1);
            journalEvent(store, [first], 2);
            const [keptDelivery] = journalEvent(store, [kept, first], 3);
            store.register.prepare("DELETE FROM webhooks WHERE id IN (?, ?)").run(first, second);
            expand(store);

            expect(outbox.pendingWebhookIds()).toEqual([kept]);
            expect(outbox.dueOf(kept, 10, 100).map((delivery) => delivery.id)).toEqual([keptDelivery]);
            expect(JSON.parse(load(outbox, kept, keptDelivery)?.body ?? "{}").data.height).toBe(3);
            expect(store.outbox.prepare("SELECT refs FROM delivery_bodies").all()).toEqual([{ refs: 1 }]);
        } finally {
            store.close();
        }
    });

    it("records the outcomes of a turn whose attempt's webhook was deleted while it was under way, that one dropped", () => {
        const store = openStore(file);
        try {
            const outbox = new DeliveryStore(store.outbox);
            const [kept, deleted] = [addWebhookRow(store), addWebhookRow(store)];
            const [keptDelivery, deletedDelivery] = journalEvent(store, [kept, deleted], 1);
            expand(store);
            store.register.prepare("DELETE FROM webhooks WHERE id = ?").run(deleted);

            expect(() =>
                outbox.recordAll([lastAttempt(deletedDelivery, 5), lastAttempt(keptDelivery, 5)]),
            ).not.toThrow();
            expect(load(outbox, kept, keptDelivery)?.status).toBe("delivered");
            expect(outbox.attempts(keptDelivery)).toHaveLength(1);
            expect(outbox.attempts(deletedDelivery)).toEqual([]);
            expect(store.outbox.prepare("SELECT COUNT(*) AS n FROM attempts").get()).toEqual({ n: 1 });
        } finally {
            store.close();
        }
    });
});

describe("the bodies of deliveries", () => {
    let dir: string;
    let store: StoreConnections;

    const bodyRows = (): Array<{ refs: number }> =>
        store.outbox.prepare<[], { refs: number }>("SELECT refs FROM delivery_bodies ORDER BY seq").all();
    const inlineBodies = (): number =>
        store.outbox
            .prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM deliveries WHERE body_seq IS NULL AND body <> ''")
            .get()?.n ?? 0;

    beforeEach(() => {
        dir = mkdtempSync(join(tmpdir(), "cww-bodies-"));
        store = openStore(join(dir, "webhooks.sqlite"));
    });

    afterEach(() => {
        store.close();
        rmSync(dir, { recursive: true, force: true });
    });

    it("keeps an event's body once for all the webhooks it is owed to, and each delivery reads it", () => {
        const outbox = new DeliveryStore(store.outbox);
        const hooks = [addWebhookRow(store), addWebhookRow(store), addWebhookRow(store)];
        const ids = journalEvent(store, hooks, 7);
        const [single] = journalEvent(store, [hooks[0]], 8);
        expand(store);

        expect(bodyRows()).toEqual([{ refs: 3 }]);
        expect(inlineBodies()).toBe(1); // an event owed once keeps its body in its row
        hooks.forEach((hook, index) => {
            const [due] = outbox.dueOf(hook, 10, 1);
            expect(due.id).toBe(ids[index]);
            expect(JSON.parse(due.body).data.height).toBe(7);
            expect(JSON.parse(load(outbox, hook, ids[index])?.body ?? "{}").data.height).toBe(7);
        });
        expect(JSON.parse(load(outbox, hooks[0], single)?.body ?? "{}").data.height).toBe(8);
        const page = outbox.page(hooks[1], 0, 10);
        expect(page.deliveries.map((delivery) => JSON.parse(delivery.body).data.height)).toEqual([7]);
        expect(outbox.oldestPending(10).map((delivery) => JSON.parse(delivery.body).data.height)).toEqual([7, 7, 7, 8]);
    });

    it("lets the body go with the last delivery that refers to it: purged, moved away or its webhook deleted", () => {
        const outbox = new DeliveryStore(store.outbox);
        const hooks = [addWebhookRow(store), addWebhookRow(store), addWebhookRow(store)];
        const ids = journalEvent(store, hooks, 1);
        expand(store);

        finish(outbox, ids[0], 1_000);
        expect(outbox.purgeFinishedBefore(2_000)).toBe(1);
        expect(bodyRows()).toEqual([{ refs: 2 }]);
        expect(JSON.parse(load(outbox, hooks[1], ids[1])?.body ?? "{}").data.height).toBe(1);

        outbox.remove([ids[1]]);
        expect(bodyRows()).toEqual([{ refs: 1 }]);

        store.register.prepare("DELETE FROM webhooks WHERE id = ?").run(hooks[2]);
        expect(bodyRows()).toEqual([]);
        expect(store.outbox.prepare("SELECT COUNT(*) AS n FROM deliveries").get()).toEqual({ n: 0 });
    });

    it("writes no body for an event whose webhooks were all deleted before it was expanded", () => {
        const hooks = [addWebhookRow(store), addWebhookRow(store)];
        journalEvent(store, hooks, 1);
        hooks.forEach((hook) => store.register.prepare("DELETE FROM webhooks WHERE id = ?").run(hook));
        expand(store);
        expect(bodyRows()).toEqual([]);
    });
});

/** A file at the schema version before the migration that contains `marker`, as an earlier version left it. */
const olderFile = (file: string, marker: string): BetterSqlite3.Database => {
    const version = MIGRATIONS.findIndex((migration) => migration.includes(marker));
    expect(version).toBeGreaterThan(0);
    const older = new BetterSqlite3(file);
    MIGRATIONS.slice(0, version).forEach((migration) => older.exec(migration));
    older.pragma(`user_version = ${version}`);
    return older;
};

describe("a file written before bodies were shared", () => {
    it("keeps reading the bodies its rows hold, and shares the bodies of events expanded after the upgrade", () => {
        const dir = mkdtempSync(join(tmpdir(), "cww-upgrade-"));
        const file = join(dir, "webhooks.sqlite");
        try {
            const older = olderFile(file, "CREATE TABLE delivery_bodies");
            const hooks = [randomUUID(), randomUUID()];
            for (const hook of hooks) {
                older
                    .prepare(
                        `INSERT INTO webhooks (id, event, target, enabled, conditions, match, token, created_at, updated_at)
                         VALUES (?, 'block.applied', 'http://127.0.0.1:9/hook', 1, '[]', 'any', 'token', 0, 0)`,
                    )
                    .run(hook);
            }
            const oldDelivery = randomUUID();
            older
                .prepare(
                    `INSERT INTO deliveries (id, webhook_id, event, body, status, attempts, next_attempt_at, created_at, updated_at)
                     VALUES (?, ?, 'block.applied', '{"old":true}', 'pending', 0, 1, 1, 1)`,
                )
                .run(oldDelivery, hooks[0]);
            older.close();

            const store = openStore(file);
            try {
                const outbox = new DeliveryStore(store.outbox);
                expect(load(outbox, hooks[0], oldDelivery)?.body).toBe('{"old":true}');
                const ids = journalEvent(store, hooks, 2);
                expand(store);
                expect(JSON.parse(load(outbox, hooks[1], ids[1])?.body ?? "{}").data.height).toBe(2);
                expect(store.outbox.prepare("SELECT refs FROM delivery_bodies").all()).toEqual([{ refs: 2 }]);
                expect(outbox.dueOf(hooks[0], 10, 10).map((delivery) => delivery.body)).toEqual([
                    '{"old":true}',
                    load(outbox, hooks[0], ids[0])?.body,
                ]);
            } finally {
                store.close();
            }
        } finally {
            rmSync(dir, { recursive: true, force: true });
        }
    });
});

describe("a file written before attempts were keyed by their delivery's seq", () => {
    it("keeps every attempt of its deliveries, in order, and drops them with their delivery", () => {
        const dir = mkdtempSync(join(tmpdir(), "cww-upgrade-attempts-"));
        const file = join(dir, "webhooks.sqlite");
        try {
            const older = olderFile(file, "CREATE TABLE attempts_by_seq");
            const hook = randomUUID();
            older
                .prepare(
                    `INSERT INTO webhooks (id, event, target, enabled, conditions, match, token, created_at, updated_at)
                     VALUES (?, 'block.applied', 'http://127.0.0.1:9/hook', 1, '[]', 'any', 'token', 0, 0)`,
                )
                .run(hook);
            const [retried, once] = [randomUUID(), randomUUID()];
            const addDelivery = older.prepare(
                `INSERT INTO deliveries (id, webhook_id, event, body, status, attempts, next_attempt_at, created_at, updated_at)
                 VALUES (?, ?, 'block.applied', '{}', ?, ?, NULL, 1, 1)`,
            );
            addDelivery.run(retried, hook, "delivered", 2);
            addDelivery.run(once, hook, "dead", 1);
            const addAttempt = older.prepare(
                `INSERT INTO attempts (delivery_id, number, started_at, duration_ms, status_code, error, response_excerpt)
                 VALUES (?, ?, ?, 5, ?, ?, ?)`,
            );
            addAttempt.run(retried, 2, 20, 200, null, "ok");
            addAttempt.run(retried, 1, 10, null, "connect ECONNREFUSED", null);
            addAttempt.run(once, 1, 30, 410, null, "gone");
            older.close();

            const store = openStore(file);
            try {
                const outbox = new DeliveryStore(store.outbox);
                expect(outbox.attempts(retried)).toEqual([
                    {
                        deliveryId: retried,
                        number: 1,
                        startedAt: 10,
                        durationMs: 5,
                        statusCode: null,
                        error: "connect ECONNREFUSED",
                        responseExcerpt: null,
                    },
                    {
                        deliveryId: retried,
                        number: 2,
                        startedAt: 20,
                        durationMs: 5,
                        statusCode: 200,
                        error: null,
                        responseExcerpt: "ok",
                    },
                ]);
                expect(outbox.attempts(once).map((attempt) => attempt.statusCode)).toEqual([410]);

                const [fresh] = journalEvent(store, [hook], 2);
                expand(store);
                finish(outbox, fresh, 40);
                expect(outbox.attempts(fresh).map((attempt) => attempt.startedAt)).toEqual([40]);

                expect(outbox.purgeFinishedBefore(2)).toBe(2);
                expect(outbox.attempts(retried)).toEqual([]);
                expect(store.outbox.prepare("SELECT COUNT(*) AS n FROM attempts").get()).toEqual({ n: 1 });
            } finally {
                store.close();
            }
        } finally {
            rmSync(dir, { recursive: true, force: true });
        }
    });
});

describe("retention", () => {
    it("deletes finished deliveries older than the cut-off with their attempts, and keeps pending ones", () => {
        const dir = mkdtempSync(join(tmpdir(), "cww-retention-"));
        const store = openStore(join(dir, "webhooks.sqlite"));
        try {
            const outbox = new DeliveryStore(store.outbox);
            const hook = addWebhookRow(store);
            const [delivered, dead, pending, recent] = [1, 2, 3, 4].map(
                (height) => journalEvent(store, [hook], height)[0],
            );
            expand(store);
            finish(outbox, delivered, 1_000);
            finish(outbox, dead, 1_000, "dead");
            finish(outbox, recent, 5_000);

            expect(outbox.purgeFinishedBefore(2_000)).toBe(2);

            expect(load(outbox, hook, delivered)).toBeUndefined();
            expect(load(outbox, hook, dead)).toBeUndefined();
            expect(outbox.attempts(delivered)).toEqual([]);
            expect(load(outbox, hook, pending)?.status).toBe("pending");
            expect(load(outbox, hook, recent)?.status).toBe("delivered");
            expect(outbox.attempts(recent)).toHaveLength(1);
        } finally {
            store.close();
            rmSync(dir, { recursive: true, force: true });
        }
    });
});

describe("the checkpointer", () => {
    it("copies committed pages into the database file from its own thread", async () => {
        const dir = mkdtempSync(join(tmpdir(), "cww-checkpoint-"));
        const file = join(dir, "webhooks.sqlite");
        const store = openStore(file);
        const failures: string[] = [];
        const checkpointer = new Checkpointer({
            file,
            intervalMs: 50,
            onFailure: (reason) => failures.push(reason),
            onFileGone: (reason) => failures.push(reason),
        });
        try {
            expect(store.outbox.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
            const sizeBefore = statSync(file).size;
            const hook = addWebhookRow(store);
            for (let height = 1; height <= 2_000; height++) {
                journalEvent(store, [hook], height);
            }
            // Without a checkpoint the rows live only in the WAL, and the database file keeps its size.
            expect(statSync(file).size).toBe(sizeBefore);

            checkpointer.start();
            const grown = await eventually(
                async () => (statSync(file).size > sizeBefore * 4 ? statSync(file).size : undefined),
                {
                    timeoutMs: 10_000,
                    intervalMs: 50,
                },
            );

            expect(grown).toBeGreaterThan(sizeBefore * 4);
            expect(failures).toEqual([]);
        } finally {
            await checkpointer.stop();
            store.close();
            rmSync(dir, { recursive: true, force: true });
        }
    });

    it.each([
        [
            "deleted",
            (file: string) => rmSync(file),
            /cannot be found any more \(ENOENT\): it was deleted or moved while in use/,
        ],
        [
            "replaced",
            (file: string) => {
                copyFileSync(file, `${file}.copy`);
                renameSync(`${file}.copy`, file);
            },
            /was replaced by another file while in use/,
        ],
    ])("says once that the database file was %s while in use", async (_what, change, said) => {
        const dir = mkdtempSync(join(tmpdir(), "cww-checkpoint-"));
        const file = join(dir, "webhooks.sqlite");
        const store = openStore(file);
        const gone: string[] = [];
        const checkpointer = new Checkpointer({
            file,
            intervalMs: 20,
            onFailure: () => undefined,
            onFileGone: (reason) => gone.push(reason),
        });
        /** Descriptors of this process open on the file: the store's two, and the thread's once it runs. */
        const openOnFile = (): number =>
            readdirSync("/proc/self/fd").filter((fd) => {
                try {
                    return readlinkSync(`/proc/self/fd/${fd}`) === file;
                } catch {
                    return false;
                }
            }).length;
        try {
            checkpointer.start();
            await eventually(async () => (openOnFile() >= 3 ? true : undefined), { timeoutMs: 10_000, intervalMs: 20 });
            change(file);
            await eventually(async () => (gone.length > 0 ? true : undefined), { timeoutMs: 10_000, intervalMs: 20 });
            expect(gone[0]).toMatch(said);
            expect(gone[0]).toContain(file);
        } finally {
            await checkpointer.stop();
            store.close();
            rmSync(dir, { recursive: true, force: true });
        }
    });

    it("lets a plugin stop completely in a process that has nothing else to keep it alive", () => {
        const script = `
            const { startPlugin } = require("./__tests__/support/plugin-harness");
            startPlugin().then(async (running) => {
                await running.stop();
                console.log("STOPPED");
            });
        `;
        const output = execFileSync(process.execPath, ["-r", "ts-node/register/transpile-only", "-e", script], {
            cwd: join(__dirname, "../.."),
            encoding: "utf8",
            timeout: 60_000,
        });

        expect(output).toContain("STOPPED");
    });

    it("reports a thread that cannot checkpoint, and the connections then checkpoint themselves", async () => {
        const dir = mkdtempSync(join(tmpdir(), "cww-checkpoint-"));
        const store = openStore(join(dir, "webhooks.sqlite"));
        const failures: string[] = [];
        const checkpointer = new Checkpointer({
            file: join(dir, "no-such-folder", "webhooks.sqlite"),
            intervalMs: 50,
            onFailure: (reason) => failures.push(reason),
            onFileGone: (reason) => failures.push(reason),
        });
        try {
            checkpointer.start();
            await eventually(async () => (failures.length > 0 ? true : undefined), {
                timeoutMs: 10_000,
                intervalMs: 20,
            });
            resumeAutoCheckpoints(store);

            expect(failures[0]).toMatch(/directory does not exist|unable to open/i);
            expect(store.register.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
            expect(store.outbox.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
        } finally {
            await checkpointer.stop();
            store.close();
            rmSync(dir, { recursive: true, force: true });
        }
    });
});
