import BetterSqlite3 from "better-sqlite3";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";

import { MIGRATIONS } from "../../src/store/migrations";
import { openEngineConnection, openStore, StoreOpenError, WAL_SIZE_LIMIT_BYTES } from "../../src/store/database";
import { WalSync } from "../../src/store/wal-sync";
import { WriteBatcher } from "../../src/store/write-batcher";
import { eventually, requestJson } from "../support/http";
import { startPlugin } from "../support/plugin-harness";

describe("the SQLite register", () => {
    let dir: string;
    let file: string;

    beforeEach(() => {
        dir = mkdtempSync(join(tmpdir(), "cww-store-"));
        file = join(dir, "webhooks.sqlite");
    });

    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it("creates the schema at the latest user_version, in WAL mode, no commit flushing on the node's thread", () => {
        const store = openStore(file);
        try {
            expect(store.register.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
            expect(store.register.pragma("journal_mode", { simple: true })).toBe("wal");
            // NORMAL: a commit writes the log without flushing it (register writes: see the next test).
            expect(store.register.pragma("synchronous", { simple: true })).toBe(1);
            expect(store.outbox.pragma("synchronous", { simple: true })).toBe(1);
        } finally {
            store.close();
        }
    });

    it("answers a register write once its log is flushed to disk, off the node's thread, and fails it when the flush fails", async () => {
        const store = openStore(file);
        const walSync = new WalSync(file);
        const order: string[] = [];
        try {
            const batcher = new WriteBatcher(store.register, async () => {
                order.push("flush asked");
                await walSync.sync();
                order.push("flushed");
            });
            const written = batcher.run(() => store.register.prepare("INSERT INTO imports VALUES ('a', 1, 1)").run());
            order.push("asked");
            await written.then(() => order.push("answered"));
            expect(order).toEqual(["asked", "flush asked", "flushed", "answered"]);

            // A copy of what is durable elsewhere (the shared register) is answered at commit.
            order.length = 0;
            const copied = batcher.run(() => store.register.prepare("INSERT INTO imports VALUES ('c', 1, 1)").run(), {
                durable: false,
            });
            const durableBeside = batcher.run(() =>
                store.register.prepare("INSERT INTO imports VALUES ('d', 1, 1)").run(),
            );
            await copied.then(() => order.push("copy answered"));
            await durableBeside.then(() => order.push("durable answered"));
            expect(order).toEqual(["flush asked", "copy answered", "flushed", "durable answered"]);

            // A log that cannot be flushed: the write is answered as failed, as a failed commit is.
            const failing = new WriteBatcher(store.register, () => new WalSync(join(dir, "gone", "x")).sync());
            await expect(
                failing.run(() => store.register.prepare("INSERT INTO imports VALUES ('b', 1, 1)").run()),
            ).rejects.toMatchObject({ code: "ENOENT" });
        } finally {
            await walSync.close();
            store.close();
        }
    });

    it("leaves checkpoints to the checkpoint thread on the node's connections, and lets the engine's checkpoint itself past 1 MiB of log", () => {
        const store = openStore(file);
        const engine = openEngineConnection(file);
        try {
            expect(store.register.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
            expect(store.outbox.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
            expect(engine.pragma("wal_autocheckpoint", { simple: true })).toBe(256);
            expect(engine.pragma("synchronous", { simple: true })).toBe(1); // NORMAL
        } finally {
            engine.close();
            store.close();
        }
    });

    it("shrinks a WAL that a burst grew past its limit once a checkpoint lets it start again, on every connection that writes", () => {
        const store = openStore(file);
        const engine = openEngineConnection(file);
        const checkpointer = new BetterSqlite3(file);
        const wal = (): number => statSync(`${file}-wal`).size;
        try {
            for (const writer of [store.register, store.outbox, engine]) {
                // A reader's snapshot holds the log, as the engine's reads do during a burst.
                const reader = new BetterSqlite3(file);
                reader.prepare("BEGIN").run();
                reader.prepare("SELECT COUNT(*) FROM webhooks").get();
                writer.exec("CREATE TABLE IF NOT EXISTS burst (body TEXT)");
                const insert = writer.prepare("INSERT INTO burst (body) VALUES (?)");
                writer.transaction(() => {
                    for (let row = 0; row < (WAL_SIZE_LIMIT_BYTES * 1.5) / 4096; row++) {
                        insert.run("x".repeat(4000));
                    }
                })();
                expect(wal()).toBeGreaterThan(WAL_SIZE_LIMIT_BYTES);
                reader.prepare("COMMIT").run();
                reader.close();
                checkpointer.pragma("wal_checkpoint(PASSIVE)");
                // The next write starts the log again from its beginning, and cuts it to the limit.
                writer.exec("DELETE FROM burst");
                expect(wal()).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
                checkpointer.pragma("wal_checkpoint(PASSIVE)");
            }
        } finally {
            checkpointer.close();
            engine.close();
            store.close();
        }
    });

    it("refuses a file written by a newer version, naming it, and leaves it alone", () => {
        const db = new BetterSqlite3(file);
        db.pragma(`user_version = ${MIGRATIONS.length + 1}`);
        db.close();

        expect(() => openStore(file)).toThrow(StoreOpenError);
        expect(() => openStore(file)).toThrow(new RegExp(`${file}.*newer than this plugin`));
        const reopened = new BetterSqlite3(file);
        expect(reopened.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length + 1);
        reopened.close();
    });

    it("stops on a corrupt file with a message naming it, and never replaces it", () => {
        const garbage = Buffer.from("this is not a database, but it is someone's data ".repeat(200));
        writeFileSync(file, garbage);

        expect(() => openStore(file)).toThrow(new RegExp(`cannot use its database file ${file}`));
        expect(readFileSync(file).equals(garbage)).toBe(true);
    });

    it.each(["/proc/self/fd/0", "/proc/cww-nowhere/webhooks.sqlite", "/sys/kernel/webhooks.sqlite"])(
        "refuses %s, on one of the kernel's file systems, naming it, before creating or opening anything",
        (path) => {
            expect(() => openStore(path)).toThrow(
                /cannot use its database file .*: \/(proc|sys)\S* is on (proc|sysfs), a file system of the kernel's that holds no files/,
            );
        },
    );

    it("refuses to start with an empty register where its journal says a register existed, until the journal is moved away too", async () => {
        const first = await startPlugin({}, { dir });
        await first.stop({ keepFiles: true });
        for (const name of ["webhooks.sqlite", "webhooks.sqlite-wal", "webhooks.sqlite-shm"]) {
            rmSync(join(dir, name), { force: true });
        }

        await expect(startPlugin({}, { dir })).rejects.toThrow(
            /cannot use its database file .*webhooks\.sqlite: it is gone, but its journal \(.*webhooks\.sqlite\.events\) is there, so a register existed/,
        );
        expect(existsSync(join(dir, "webhooks.sqlite"))).toBe(false);

        renameSync(join(dir, "webhooks.sqlite.events"), join(dir, "journal-of-the-lost-register"));
        const fresh = await startPlugin({}, { dir });
        await fresh.stop();
    });

    it("says storage degraded, naming the file, when the database file is deleted while the plugin runs", async () => {
        const running = await startPlugin({}, { dir });
        try {
            for (const name of ["webhooks.sqlite", "webhooks.sqlite-wal", "webhooks.sqlite-shm"]) {
                rmSync(join(dir, name), { force: true });
            }
            const storage = await eventually(
                async () => {
                    const status = await requestJson<{ data: { storage: { state: string; cause: string | null } } }>(
                        running.url,
                    );
                    return status.body.data.storage.state === "degraded" ? status.body.data.storage : undefined;
                },
                { timeoutMs: 15_000, intervalMs: 100 },
            );
            expect(storage.cause).toMatch(
                /webhooks\.sqlite cannot be found any more \(ENOENT\): it was deleted or moved while in use/,
            );
        } finally {
            await running.stop();
        }
    });

    it("stops the plugin, naming the file, when the file cannot be opened", async () => {
        writeFileSync(file, "a file where the plugin's folder would have to be");

        await expect(startPlugin({}, { dir: join(dir, "webhooks.sqlite", "not-a-folder") })).rejects.toThrow(
            /cannot use its database file .*not-a-folder\/webhooks\.sqlite/,
        );
    });

    it("imports ARK's webhooks.json once, ids and tokens kept", async () => {
        const arkFile = join(dir, "webhooks.json");
        writeFileSync(
            arkFile,
            JSON.stringify({
                webhooks: [
                    {
                        id: "3b9f1f8a-8f3e-4d8c-9d3a-1c2b3a4d5e6f",
                        event: "block.applied",
                        target: "http://receiver.example/a",
                        token: "0123456789abcdef0123456789abcdef",
                        enabled: true,
                        conditions: [{ key: "height", condition: "gt", value: "10" }],
                    },
                    { id: "bad", event: "block.applied" },
                ],
            }),
        );

        const first = await startPlugin({}, { dir, arkWebhooksFile: arkFile });
        const imported = first.plugin.register.find("3b9f1f8a-8f3e-4d8c-9d3a-1c2b3a4d5e6f");
        const deleted = await requestJson(`${first.url}/webhooks/3b9f1f8a-8f3e-4d8c-9d3a-1c2b3a4d5e6f`, {
            method: "DELETE",
        });
        await first.stop({ keepFiles: true });
        const second = await startPlugin({}, { dir, arkWebhooksFile: arkFile });
        const afterRestart = second.plugin.register.page(1, 10).totalCount;
        await second.stop();

        expect(imported).toMatchObject({
            event: "block.applied",
            token: "0123456789abcdef0123456789abcdef",
            enabled: true,
            conditions: [{ key: "height", condition: "gt", value: "10" }],
        });
        expect(first.logs).toEqual(
            expect.arrayContaining([
                expect.stringMatching(/imported 1 webhooks/),
                expect.stringMatching(/skipped an entry/),
            ]),
        );
        expect(deleted.status).toBe(204);
        expect(afterRestart).toBe(0);
    });

    it("imports ARK's webhooks only as far as the register's regexp patterns allow, and says which it skipped", async () => {
        const arkFile = join(dir, "webhooks.json");
        const withPattern = (index: number) => ({
            id: `3b9f1f8a-8f3e-4d8c-9d3a-1c2b3a4d5e6${index}`,
            event: "transaction.applied",
            target: "http://receiver.example/a",
            token: "0123456789abcdef0123456789abcdef",
            enabled: true,
            conditions: [{ key: "vendorField", condition: "regexp", value: `order-${index}` }],
        });
        writeFileSync(arkFile, JSON.stringify({ webhooks: [0, 1, 2].map(withPattern) }));

        const running = await startPlugin({ limits: { regexpPatterns: 2 } }, { dir, arkWebhooksFile: arkFile });
        const total = running.plugin.register.page(1, 10).totalCount;
        await running.stop();

        expect(total).toBe(2);
        expect(running.logs).toEqual(
            expect.arrayContaining([
                expect.stringMatching(/imported 2 webhooks/),
                expect.stringMatching(
                    /skipped an entry of .*: 3b9f1f8a-8f3e-4d8c-9d3a-1c2b3a4d5e62: .*over limits\.regexpPatterns \(2\)/,
                ),
            ]),
        );
    });
});
