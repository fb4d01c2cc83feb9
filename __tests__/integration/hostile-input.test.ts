import { execFileSync } from "child_process";
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";

import { Delivery } from "../../src/contracts";
import { DeliverySender } from "../../src/delivery/sender";
import { openStore } from "../../src/store/database";
import { DeliveryStore } from "../../src/store/delivery-store";
import { timerTicksDuring } from "../support/event-loop";
import { eventually, requestJson } from "../support/http";
import { RunningPlugin, startPlugin } from "../support/plugin-harness";
import { answer, Receiver } from "../support/receiver";

jest.setTimeout(60_000);

interface ErrorBody {
    statusCode: number;
    message: string;
}

const created = async (running: RunningPlugin, body: Record<string, unknown>): Promise<string> => {
    const response = await requestJson<{ data: { id: string } }>(`${running.url}/webhooks`, {
        method: "POST",
        body: { event: "block.applied", conditions: [], ...body },
    });
    expect(response.status).toBe(201);
    return response.body.data.id;
};

const deliveriesOf = (running: RunningPlugin, webhookId: string): Delivery[] =>
    running.plugin.outbox.page(webhookId, 0, 1000).deliveries;

/** JSON text of a value nested `depth` objects deep, written without recursion. */
const nested = (depth: number): string => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

const postRaw = (running: RunningPlugin, json: string) =>
    requestJson<ErrorBody>(`${running.url}/webhooks`, {
        method: "POST",
        rawBody: json,
        headers: { "content-type": "application/json" },
    });

describe("hostile input never freezes the node", () => {
    let running: RunningPlugin | undefined;
    const receivers: Receiver[] = [];

    afterEach(async () => {
        jest.restoreAllMocks();
        // Receivers first: their sockets close, so attempts under way end before the plugin waits for them.
        await Promise.all(receivers.splice(0).map((receiver) => receiver.stop()));
        await running?.stop();
        running = undefined;
    });

    describe("targets are read with the sender's own parser", () => {
        it.each([
            ["a port over 65535", "http://127.0.0.1:99999/", /"target" is not a valid URL/],
            ["an address that is no IPv4 address", "http://256.256.256.256/", /"target" is not a valid URL/],
            ["port 0", "http://127.0.0.1:0/hook", /"target" has port 0; a port is 1 to 65535/],
            ["credentials", "http://user:secret@127.0.0.1/hook", /"target" must not carry credentials/],
            ["a space in the host", "http://exa mple.com/", /"target" is not a valid URL/],
            ["an unclosed IPv6 literal", "http://[::1/", /"target" is not a valid URL/],
            ["a file URL", "file:///etc/passwd", /"target" must be an http or https URL/],
        ])("refuses %s with 422 and stores nothing", async (_case, target, message) => {
            running = await startPlugin();
            const response = await requestJson<ErrorBody>(`${running.url}/webhooks`, {
                method: "POST",
                body: { event: "block.applied", target, conditions: [] },
            });

            expect(response.status).toBe(422);
            expect(response.body.message).toMatch(message);
            expect(running.plugin.register.page(1, 100).totalCount).toBe(0);
        });

        it("records a stored target the sender cannot read as failed, once, while the event loop turns", async () => {
            running = await startPlugin();
            const id = await created(running, { target: "http://127.0.0.1:9/hook" });
            // An older version stored targets this parser refuses: such a row must not spin the loop.
            running.plugin.store.register
                .prepare("UPDATE webhooks SET target = ? WHERE id = ?")
                .run("http://127.0.0.1:99999/", id);
            await running.plugin.register.update(id, {});

            const ticks = await timerTicksDuring(1_000, async () => {
                const ping = await requestJson(`${running!.url}/webhooks/${id}/ping`, { method: "POST" });
                expect(ping.status).toBe(202);
            });
            const status = await requestJson(`${running.url}`);

            expect(ticks).toBeGreaterThan(40);
            expect(status.status).toBe(200);
            const [delivery] = deliveriesOf(running, id);
            expect(delivery).toMatchObject({ status: "failed", attempts: 1 });
            expect(running.plugin.outbox.attempts(delivery.id)[0].error).toMatch(/not a valid URL/);
        });
    });

    describe("no failure inside the dispatcher re-dispatches without time passing", () => {
        // Sends allowed in the 2 s: a busy loop would send thousands.
        const failures: Array<[string, () => () => number, number]> = [
            [
                "a sender that throws",
                () => {
                    const spy = jest
                        .spyOn(DeliverySender.prototype, "send")
                        .mockRejectedValue(new Error("sender broke"));
                    return () => spy.mock.calls.length;
                },
                // Four connections at once, then one retry round after a second.
                12,
            ],
            [
                "a store that cannot record outcomes",
                () => {
                    const sends = jest.spyOn(DeliverySender.prototype, "send");
                    jest.spyOn(DeliveryStore.prototype, "recordAll").mockImplementation(() => {
                        throw new Error("store broke");
                    });
                    return () => {
                        const ids = sends.mock.calls.map(([request]) => request.headers["webhook-id"]);
                        // None is sent again while its outcome is held.
                        expect(new Set(ids).size).toBe(ids.length);
                        return ids.length;
                    };
                },
                // Answered attempts free their slots before their outcomes are written: the 20
                // events and the ping may each go out once before the first write fails.
                21,
            ],
            [
                "a store whose reads throw",
                () => {
                    const sends = jest.spyOn(DeliverySender.prototype, "send");
                    jest.spyOn(DeliveryStore.prototype, "dueOf").mockImplementation(() => {
                        throw new Error("store broke");
                    });
                    return () => sends.mock.calls.length;
                },
                12,
            ],
        ];

        it.each(failures)(
            "keeps the event loop turning and the API answering with %s",
            async (_case, inject, bound) => {
                const receiver = await new Receiver().start();
                receivers.push(receiver);
                // The engine in this thread, so that the spies reach its sender and its store.
                running = await startPlugin({}, { engine: "inline" });
                // Before the webhook exists: the engine's first look at its deliveries meets the fault.
                const sends = inject();
                const id = await created(running, { target: receiver.url });

                const ticks = await timerTicksDuring(2_000, async () => {
                    for (let height = 1; height <= 20; height++) {
                        running!.plugin.listener.handle({ name: "block.applied", data: { height } });
                    }
                    await requestJson(`${running!.url}/webhooks/${id}/ping`, { method: "POST" });
                });
                const status = await requestJson(`${running.url}`);

                expect(ticks).toBeGreaterThan(80);
                expect(status.status).toBe(200);
                expect(sends()).toBeLessThanOrEqual(bound);
                expect(running.logs.filter((line) => line.startsWith("error:")).length).toBeLessThanOrEqual(2);
            },
        );

        it("keeps the event loop turning with a resolver that throws", async () => {
            running = await startPlugin(
                {},
                {
                    resolve: () => {
                        throw new Error("resolver broke");
                    },
                },
            );
            const id = await created(running, { target: "http://receiver.test/hook" });

            const ticks = await timerTicksDuring(1_000, async () => {
                await requestJson(`${running!.url}/webhooks/${id}/ping`, { method: "POST" });
            });
            const [delivery] = await eventually(async () => {
                const found = deliveriesOf(running!, id);
                return found[0]?.attempts === 1 ? found : undefined;
            });

            expect(ticks).toBeGreaterThan(40);
            expect(delivery.status).toBe("pending");
            expect(running.plugin.outbox.attempts(delivery.id)[0].error).toMatch(/resolver broke/);
        });
    });

    describe("regular expressions have a budget", () => {
        it.each([
            ["(.{0,200}){0,5}z"],
            [".{1000}z"],
            ["(.{0,100}){0,10}z"],
            ["((a{1,10}){1,10}){1,10}"],
            ["(\\w{50}|\\d{50}|\\s{50}){1,10}"],
        ])("refuses %s with 422 naming the limit", async (pattern) => {
            running = await startPlugin();
            const response = await requestJson<ErrorBody>(`${running.url}/webhooks`, {
                method: "POST",
                body: {
                    event: "transaction.applied",
                    target: "http://127.0.0.1:9/hook",
                    conditions: [{ key: "vendorField", condition: "regexp", value: pattern }],
                },
            });

            expect(response.status).toBe(422);
            expect(response.body.message).toMatch(
                /"conditions\[0\]\.value" is too large .* limits\.regexpProgramSize \(1000\)/,
            );
        });

        it.each([["^D[1-9A-HJ-NP-Za-km-z]{33}$"], ["(a+)+$"], ["invoice-\\d{1,12}"]])("accepts %s", async (pattern) => {
            running = await startPlugin();
            await created(running, {
                event: "transaction.applied",
                target: "http://127.0.0.1:9/hook",
                conditions: [{ key: "vendorField", condition: "regexp", value: pattern }],
            });
        });

        it("caps the register's distinct patterns, each compiled once whatever the number of conditions using it", async () => {
            running = await startPlugin({ limits: { regexpPatterns: 3 } });
            const withPattern = (pattern: string) => ({
                event: "transaction.applied",
                target: "http://127.0.0.1:9/hook",
                conditions: [{ key: "vendorField", condition: "regexp", value: pattern }],
            });
            const first = await created(running, withPattern("a+"));
            await created(running, withPattern("b+"));
            await created(running, withPattern("c+"));
            await created(running, withPattern("a+"));

            const over = await requestJson<ErrorBody>(`${running.url}/webhooks`, {
                method: "POST",
                body: withPattern("d+"),
            });
            expect(over.status).toBe(422);
            expect(over.body.message).toMatch(/4 distinct regexp patterns, over limits\.regexpPatterns \(3\)/);

            // Changing a pattern another webhook still uses frees nothing; deleting its last user does.
            const update = await requestJson<ErrorBody>(`${running.url}/webhooks/${first}`, {
                method: "PUT",
                body: { conditions: [{ key: "vendorField", condition: "regexp", value: "d+" }] },
            });
            expect(update.status).toBe(422);
            const others = running.plugin.register.page(1, 100).webhooks.filter((webhook) => webhook.id !== first);
            const cUser = others.find((webhook) => webhook.conditions[0].value === "c+");
            expect((await requestJson(`${running.url}/webhooks/${cUser?.id}`, { method: "DELETE" })).status).toBe(204);
            await created(running, withPattern("d+"));
        });

        it("tests what the listener had no time for later, and owes exactly what matches", async () => {
            // A budget no event can meet: every webhook's conditions are tested off the listener's path.
            running = await startPlugin({
                limits: { matchingBudgetMs: 0.000_001 },
                delivery: { retryScheduleSeconds: [3600] },
            });
            const hostile = { key: "vendorField", condition: "regexp", value: "(.{0,20}){0,5}z" };
            const matching = await Promise.all(
                Array.from({ length: 10 }, () =>
                    created(running!, {
                        event: "transaction.applied",
                        target: "http://127.0.0.1:9/hook",
                        conditions: [...Array(49).fill(hostile), { key: "amount", condition: "gt", value: 5 }],
                    }),
                ),
            );
            const silent = await Promise.all(
                Array.from({ length: 10 }, () =>
                    created(running!, {
                        event: "transaction.applied",
                        target: "http://127.0.0.1:9/hook",
                        conditions: Array(50).fill(hostile),
                    }),
                ),
            );

            running.plugin.listener.handle({
                name: "transaction.applied",
                data: { amount: "10", vendorField: "y".repeat(255) },
            });
            await eventually(async () => (running!.plugin.journal.backlog() === 0 ? true : undefined));

            expect(running.plugin.listener.stats.deferredTests).toBeGreaterThan(0);
            expect(matching.map((id) => deliveriesOf(running!, id).length)).toEqual(Array(10).fill(1));
            expect(silent.map((id) => deliveriesOf(running!, id).length)).toEqual(Array(10).fill(0));
        });
    });

    describe("condition values are bounded in depth and size", () => {
        const withValue = (valueJson: string): string =>
            `{"event":"block.applied","target":"http://127.0.0.1:9/hook","conditions":[{"key":"a","condition":"eq","value":${valueJson}}]}`;

        it.each([
            [
                "5,000 levels",
                nested(5_000),
                /"conditions\[0\]\.value" nests deeper than limits\.conditionValueDepth \(8 levels\)/,
            ],
            ["4,000 levels", nested(4_000), /"conditions\[0\]\.value" nests deeper/],
            ["9 levels", nested(9), /"conditions\[0\]\.value" nests deeper/],
            [
                "9 KB",
                JSON.stringify("x".repeat(9_000)),
                /"conditions\[0\]\.value" is larger than limits\.conditionValueBytes \(8192/,
            ],
        ])("refuses a value of %s with 422 and stores nothing", async (_case, valueJson, message) => {
            running = await startPlugin({ limits: { bodyBytes: 1_000_000 } });
            const response = await postRaw(running, withValue(valueJson));

            expect(response.status).toBe(422);
            expect(response.body.message).toMatch(message);
            expect(running.plugin.register.page(1, 100).totalCount).toBe(0);
        });

        it("accepts a value 8 levels deep", async () => {
            running = await startPlugin();
            const response = await postRaw(running, withValue(nested(7)));

            expect(response.status).toBe(201);
        });

        it.each(["event", "target", "enabled", "conditions", "match", "extra"])(
            "answers 4xx, never 500, to a 5,000-level value in %s",
            async (field) => {
                running = await startPlugin({ limits: { bodyBytes: 1_000_000 } });
                const fields: Record<string, string> = {
                    event: '"block.applied"',
                    target: '"http://127.0.0.1:9/hook"',
                    conditions: "[]",
                    [field]: nested(5_000),
                };
                const json = `{${Object.entries(fields)
                    .map(([name, value]) => `"${name}":${value}`)
                    .join(",")}}`;
                const create = await postRaw(running, json);

                expect(create.status).toBeGreaterThanOrEqual(400);
                expect(create.status).toBeLessThan(500);
                expect(running.plugin.register.page(1, 100).totalCount).toBe(0);
            },
        );
    });

    it("never delays a due retry behind a receiver that hangs", async () => {
        const hanging = await new Receiver(() => undefined).start();
        const failing = await new Receiver(answer(503)).start();
        receivers.push(hanging, failing);
        running = await startPlugin({ delivery: { timeoutMs: 30_000, retryScheduleSeconds: [1, 1, 1, 1, 1, 1] } });
        const slow = await created(running, { event: "block.applied", target: hanging.url });
        const retried = await created(running, { event: "block.forged", target: failing.url });
        // More deliveries than the hanging receiver's connections: some stay due behind its cap.
        for (let height = 1; height <= 8; height++) {
            running.plugin.listener.handle({ name: "block.applied", data: { height } });
        }
        running.plugin.listener.handle({ name: "block.forged", data: { height: 1 } });

        const delivery = await eventually(
            async () => {
                const [owed] = deliveriesOf(running!, retried);
                return owed?.attempts >= 4 ? owed : undefined;
            },
            { timeoutMs: 15_000, intervalMs: 100 },
        );

        const starts = running.plugin.outbox.attempts(delivery.id).map((attempt) => attempt.startedAt);
        const gaps = starts.slice(1).map((start, index) => start - starts[index]);
        // Each retry is due 1 s (±10 %) after the last attempt; at most one more second may pass.
        expect(gaps.length).toBeGreaterThanOrEqual(3);
        expect(gaps.every((gap) => gap < 2_100)).toBe(true);
        expect(hanging.requests.length).toBe(4);
        expect(deliveriesOf(running, slow).every((owed) => owed.attempts === 0)).toBe(true);
    });

    it("cancels a webhook's queued deliveries when its receiver answers 410, and says so once", async () => {
        const gone = await new Receiver(answer(410)).start();
        receivers.push(gone);
        running = await startPlugin({ delivery: { concurrencyPerTarget: 1 } });
        const id = await created(running, { target: gone.url });

        for (let height = 1; height <= 20; height++) {
            running.plugin.listener.handle({ name: "block.applied", data: { height } });
        }
        const deliveries = await eventually(async () => {
            const owed = deliveriesOf(running!, id);
            return owed.length === 20 && owed.every((delivery) => delivery.status !== "pending") ? owed : undefined;
        });
        // Every outcome is written, and a request reaches the receiver before its outcome: the count is final.

        expect(gone.requests).toHaveLength(1);
        expect(deliveries.filter((delivery) => delivery.status === "failed")).toHaveLength(1);
        const cancelled = deliveries.filter((delivery) => delivery.status === "cancelled");
        expect(cancelled).toHaveLength(19);
        expect(new Set(cancelled.map((delivery) => delivery.reason))).toEqual(
            new Set(["the receiver answered 410 Gone"]),
        );
        expect(running.logs.filter((line) => line.includes(`disabled webhook ${id}`))).toHaveLength(1);
        expect(running.plugin.register.find(id)?.enabled).toBe(false);
        const shown = await requestJson<{ data: Array<{ status: string; reason: string | null }> }>(
            `${running.url}/webhooks/${id}/deliveries?limit=1`,
        );
        expect(shown.body.data[0]).toMatchObject({ status: "cancelled", reason: "the receiver answered 410 Gone" });
    });

    it("trims server.apiKey read from app.json as it trims the environment variable", async () => {
        running = await startPlugin({ server: { apiKey: "  s3cret\n" } });

        const allowed = await requestJson(running.url, { headers: { authorization: "Bearer s3cret" } });

        expect(allowed.status).toBe(200);
        expect(running.plugin.options.server.apiKey).toBe("s3cret");
    });
});

describe("the database file", () => {
    let dir: string;

    beforeEach(() => {
        dir = mkdtempSync(join(tmpdir(), "cww-file-"));
    });

    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it("is created owner-only, in an owner-only folder, with its WAL", async () => {
        const folder = join(dir, "core-wallet-webhooks");
        const running = await startPlugin({}, { dir: folder });
        try {
            await created(running, { target: "http://127.0.0.1:9/hook" });

            expect(statSync(folder).mode & 0o777).toBe(0o700);
            expect(statSync(running.file).mode & 0o777).toBe(0o600);
            expect(statSync(`${running.file}-wal`).mode & 0o777).toBe(0o600);
        } finally {
            await running.stop({ keepFiles: true });
        }
    });

    it("leaves out, and says so, a stored webhook whose conditions no longer compile", async () => {
        const first = await startPlugin({}, { dir });
        const kept = await created(first, { target: "http://127.0.0.1:9/hook" });
        const broken = await created(first, { target: "http://127.0.0.1:9/hook" });
        // An older version stored ARK's imports without validating them.
        first.plugin.store.register
            .prepare("UPDATE webhooks SET conditions = ? WHERE id = ?")
            .run(JSON.stringify([{ key: "a", condition: "regexp", value: "(a)\\1" }]), broken);
        await first.stop({ keepFiles: true });

        const second = await startPlugin({}, { dir });
        try {
            expect(second.logs).toContainEqual(
                expect.stringMatching(`leaves webhook ${broken} out: its conditions do not compile`),
            );
            expect(second.plugin.index.get(kept)).toBeDefined();
            expect(second.plugin.index.get(broken)).toBeUndefined();
            expect((await requestJson(`${second.url}/webhooks/${broken}`)).status).toBe(200);
        } finally {
            await second.stop({ keepFiles: true });
        }
    });

    it("refuses an existing 0-byte file, saying how to start afresh", async () => {
        const file = join(dir, "webhooks.sqlite");
        writeFileSync(file, "");

        await expect(startPlugin({}, { dir })).rejects.toThrow(
            `core-wallet-webhooks cannot use its database file ${file}: it is empty (0 bytes), so it holds no register; to start afresh, delete it`,
        );
        expect(statSync(file).size).toBe(0);
    });

    it("refuses a file it cannot write at start, naming the file", () => {
        const file = join(dir, "webhooks.sqlite");
        openStore(file).close();
        chmodSync(file, 0o444);
        chmodSync(dir, 0o777);
        const script = `
            const { startPlugin } = require("./__tests__/support/plugin-harness");
            startPlugin({}, { dir: ${JSON.stringify(dir)} }).then(
                () => console.log("STARTED"),
                (error) => console.log("REFUSED " + error.message),
            );
        `;
        // Root writes any file whatever its mode: run the start as an ordinary user, as a node would.
        const asUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
        const output = execFileSync(process.execPath, ["-r", "ts-node/register/transpile-only", "-e", script], {
            cwd: resolve(__dirname, "../.."),
            encoding: "utf8",
            timeout: 60_000,
            env: { ...process.env, HOME: dir },
            ...asUser,
        });

        expect(output).toContain(
            `REFUSED core-wallet-webhooks cannot use its database file ${file}: attempt to write a readonly database: the plugin needs to write it and the folder it is in (check their owner and mode)`,
        );
    });
});
