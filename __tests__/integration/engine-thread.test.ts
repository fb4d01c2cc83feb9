import { isMainThread, threadId } from "worker_threads";

import { Webhook } from "../../src/contracts";
import { ThreadedEngine } from "../../src/engine/threaded-engine";
import { eventually, requestJson } from "../support/http";
import { RunningPlugin, startPlugin } from "../support/plugin-harness";
import { Receiver } from "../support/receiver";

jest.setTimeout(60_000);

const heightOf = (body: string): number => (JSON.parse(body) as { data: { height: number } }).data.height;

const createWebhook = async (running: RunningPlugin, target: string): Promise<string> => {
    const response = await requestJson<{ data: { id: string } }>(`${running.url}/webhooks`, {
        method: "POST",
        body: { event: "block.applied", target, conditions: [] },
    });
    expect(response.status).toBe(201);
    return response.body.data.id;
};

/**
 * Waits until every outcome is written, then for an answer from the engine's thread: whatever the
 * thread posted after those outcomes (an announcement) came across before that answer.
 */
const everyOutcomeAcross = async (running: RunningPlugin): Promise<void> => {
    await eventually(async () => (running.plugin.outbox.pendingCount() === 0 ? true : undefined));
    await running.plugin.engine.metrics();
};

/** An engine in the node's thread passes on the next turn after a wake; with SQLite, within that turn. */
const turnsOfTheLoop = async (turns: number): Promise<void> => {
    for (let turn = 0; turn < turns; turn++) {
        await new Promise((resolve) => setImmediate(resolve));
    }
};

const threadOf = (running: RunningPlugin): ThreadedEngine => {
    expect(running.plugin.engine).toBeInstanceOf(ThreadedEngine);
    return running.plugin.engine as ThreadedEngine;
};

const metricsText = async (running: RunningPlugin, headers: Record<string, string> = {}) => {
    const response = await fetch(running.url.replace(/\/api$/, "/metrics"), { headers });
    return { status: response.status, type: response.headers.get("content-type"), text: await response.text() };
};

/** The value of one sample line of a Prometheus text body, or undefined. */
const sample = (text: string, line: string): number | undefined => {
    const found = text.split("\n").find((candidate) => candidate.startsWith(`${line} `));
    return found === undefined ? undefined : Number(found.slice(line.length + 1));
};

describe("the delivery engine", () => {
    let running: RunningPlugin | undefined;
    const receivers: Receiver[] = [];

    afterEach(async () => {
        await Promise.all(receivers.splice(0).map((receiver) => receiver.stop()));
        await running?.stop();
        running = undefined;
    });

    describe("in a thread of its own", () => {
        it("sends from another thread than the node's", async () => {
            const receiver = await new Receiver().start();
            receivers.push(receiver);
            running = await startPlugin();
            await createWebhook(running, receiver.url);

            running.plugin.listener.handle({ name: "block.applied", data: { height: 1 } });
            await eventually(async () => (receiver.requests.length === 1 ? true : undefined), { intervalMs: 20 });

            const engine = threadOf(running);
            expect(isMainThread).toBe(true);
            expect(engine.thread?.threadId).toBeGreaterThan(threadId);
            expect(engine.running).toBe(true);
            // The kernel hears of the attempt on the node's thread, as from ARK's plugin.
            await eventually(async () =>
                running!.kernelEvents.some((event) => event.name === "webhooks.broadcasted") ? true : undefined,
            );
        });

        it("tells the kernel of every attempt with the webhook that made it, as ARK's plugin does", async () => {
            const answering = await new Receiver().start();
            const failing = await new Receiver((_request, _index, response) => response.writeHead(500).end()).start();
            receivers.push(answering, failing);
            running = await startPlugin();
            const [delivered, refused] = [
                await createWebhook(running, answering.url),
                await createWebhook(running, failing.url),
            ];

            // Attempts of both webhooks, many to a message of the engine's.
            for (let height = 1; height <= 300; height++) {
                running.plugin.listener.handle({ name: "block.applied", data: { height } });
            }
            const told = () => running!.kernelEvents.filter((event) => event.name.startsWith("webhooks."));
            await eventually(async () => (told().length >= 600 ? true : undefined), { timeoutMs: 30_000 });

            const data = told().map(
                (event): Record<string, unknown> => ({ name: event.name, ...(event.data as Record<string, unknown>) }),
            );
            const broadcasted = data.filter((event) => event.name === "webhooks.broadcasted");
            const failed = data.filter((event) => event.name === "webhooks.failed");
            expect(broadcasted).toHaveLength(300);
            expect(failed.length).toBeGreaterThanOrEqual(300);
            for (const event of broadcasted) {
                expect(Object.keys(event)).toEqual([
                    "name",
                    "executionTime",
                    "webhook",
                    "deliveryId",
                    "attempt",
                    "status",
                    "statusCode",
                ]);
                expect(event).toMatchObject({ status: "delivered", statusCode: 200, attempt: 1 });
                expect(event.webhook).toEqual({
                    id: delivered,
                    event: "block.applied",
                    target: answering.url,
                    enabled: true,
                    conditions: [],
                    match: "any",
                });
            }
            for (const event of failed) {
                expect(event).toMatchObject({ statusCode: 500, error: "HTTP 500", webhook: { id: refused } });
                expect(event.webhook).not.toHaveProperty("token");
            }
            expect(new Set(broadcasted.map((event) => event.deliveryId)).size).toBe(300);
        });

        it("dispatches no announcement of a name no kernel listener hears, and asks once a message, not once an attempt", async () => {
            const answering = await new Receiver().start();
            const failing = await new Receiver((_request, _index, response) => response.writeHead(500).end()).start();
            receivers.push(answering, failing);
            const asked: string[] = [];
            running = await startPlugin(
                {},
                {
                    isHeard: (name) => {
                        asked.push(name);
                        return name === "webhooks.failed";
                    },
                },
            );
            await createWebhook(running, answering.url);
            await createWebhook(running, failing.url);

            for (let height = 1; height <= 300; height++) {
                running.plugin.listener.handle({ name: "block.applied", data: { height } });
            }
            await eventually(async () => (answering.requests.length >= 300 ? true : undefined), { timeoutMs: 30_000 });
            const failed = () => running!.kernelEvents.filter((event) => event.name === "webhooks.failed");
            await eventually(async () => (failed().length >= 300 ? true : undefined), { timeoutMs: 30_000 });

            expect(running.kernelEvents.filter((event) => event.name === "webhooks.broadcasted")).toEqual([]);
            // The node's thread also asks of both names every quarter second, whatever crosses: the
            // asks beyond those are the messages' own, fewer than the 300 failed attempts they told of.
            const asks = (name: string) => asked.filter((one) => one === name).length;
            expect(asks("webhooks.broadcasted")).toBeGreaterThan(0);
            expect(asks("webhooks.failed") - asks("webhooks.broadcasted")).toBeLessThan(300);
        });

        it("sends no announcement across while no kernel listener hears its name, and resumes once one does", async () => {
            const receiver = await new Receiver().start();
            receivers.push(receiver);
            let listening = false;
            running = await startPlugin({}, { isHeard: () => listening });
            await createWebhook(running, receiver.url);
            const crossings: string[] = [];
            threadOf(running).thread?.on("message", (message: { kind: string }) => crossings.push(message.kind));

            for (let height = 1; height <= 100; height++) {
                running.plugin.listener.handle({ name: "block.applied", data: { height } });
            }
            await eventually(async () => (receiver.requests.length >= 100 ? true : undefined), { timeoutMs: 30_000 });
            await everyOutcomeAcross(running);
            expect(crossings).not.toContain("announce");
            expect(running.kernelEvents).toEqual([]);

            listening = true;
            let height = 100;
            await eventually(
                async () => {
                    running!.plugin.listener.handle({ name: "block.applied", data: { height: ++height } });
                    return running!.kernelEvents.some((event) => event.name === "webhooks.broadcasted")
                        ? true
                        : undefined;
                },
                { timeoutMs: 10_000, intervalMs: 50 },
            );
            expect(crossings).toContain("announce");
        });

        it("tells a thread started again which announcements are heard before it sends any", async () => {
            const receiver = await new Receiver().start();
            receivers.push(receiver);
            running = await startPlugin({}, { isHeard: () => false });
            await createWebhook(running, receiver.url);
            const engine = threadOf(running);
            const first = engine.thread;
            await first?.terminate();
            const restarted = await eventually(async () => (engine.thread !== first ? engine.thread : undefined), {
                intervalMs: 50,
            });
            const crossings: string[] = [];
            restarted.on("message", (message: { kind: string }) => crossings.push(message.kind));

            for (let height = 1; height <= 50; height++) {
                running.plugin.listener.handle({ name: "block.applied", data: { height } });
            }
            await eventually(async () => (receiver.requests.length >= 50 ? true : undefined), { timeoutMs: 30_000 });
            await everyOutcomeAcross(running);
            expect(engine.restarts).toBe(1);
            expect(crossings).not.toContain("announce");
        });

        it("loses nothing when its thread is killed mid-run, and starts a new one", async () => {
            const events = 300;
            // Slow enough that the kill lands with deliveries under way and many still owed.
            const receiver = await new Receiver((_request, _index, response) => {
                setTimeout(() => response.writeHead(200).end("ok"), 20);
            }).start();
            receivers.push(receiver);
            running = await startPlugin();
            await createWebhook(running, receiver.url);
            const engine = threadOf(running);

            for (let height = 1; height <= events; height++) {
                running.plugin.listener.handle({ name: "block.applied", data: { height } });
            }
            await eventually(async () => (receiver.requests.length >= 40 ? true : undefined), { intervalMs: 5 });
            await engine.thread?.terminate();
            const deliveredAtKill = new Set(receiver.requests.map((request) => heightOf(request.body))).size;

            await eventually(
                async () =>
                    new Set(receiver.requests.map((request) => heightOf(request.body))).size === events
                        ? true
                        : undefined,
                { timeoutMs: 30_000, intervalMs: 50 },
            );
            expect(deliveredAtKill).toBeLessThan(events);
            expect(engine.restarts).toBe(1);
            expect(engine.running).toBe(true);
            expect(running.logs.filter((line) => line.includes("delivery engine's thread died"))).toHaveLength(1);
            // A delivery sent twice (under way at the kill) carries the same webhook-id both times.
            const idsByHeight = new Map<number, Set<string>>();
            for (const request of receiver.requests) {
                const ids = idsByHeight.get(heightOf(request.body)) ?? new Set();
                ids.add(String(request.headers["webhook-id"]));
                idsByHeight.set(heightOf(request.body), ids);
            }
            expect([...idsByHeight.values()].every((ids) => ids.size === 1)).toBe(true);
            const status = await requestJson<{
                data: { deliveries: { engine: { running: boolean; restarts: number } } };
            }>(running.url);
            expect(status.body.data.deliveries.engine).toEqual({ running: true, restarts: 1 });
        });

        it("leaves no thread behind when the plugin stops", async () => {
            running = await startPlugin();
            const engine = threadOf(running);
            const thread = engine.thread;
            const exited = new Promise((resolve) => thread?.once("exit", resolve));

            await running.stop();
            running = undefined;

            await expect(exited).resolves.toBe(0);
            expect(engine.running).toBe(false);
            expect(engine.restarts).toBe(0);
        });
    });

    describe("a webhook created just before its first events", () => {
        // The engine reads the journal on its own turns and hears of a new webhook by a message (in
        // its thread): its first events can be expanded before the news comes. Held back here.
        it("delivers those events once the engine hears of the webhook", async () => {
            const receiver = await new Receiver().start();
            receivers.push(receiver);
            running = await startPlugin({}, { engine: "inline" });
            const engine = running.plugin.engine;
            const held: Webhook[] = [];
            const tell = jest.spyOn(engine, "webhookChanged").mockImplementation((webhook) => void held.push(webhook));
            const id = await createWebhook(running, receiver.url);

            running.plugin.listener.handle({ name: "block.applied", data: { height: 1 } });
            const outbox = running.plugin.outbox;
            await eventually(async () => (outbox.pendingWebhookIds().includes(id) ? true : undefined), {
                intervalMs: 10,
            });
            engine.wake();
            await turnsOfTheLoop(2);
            expect(await engine.origins()).toEqual([]);
            expect(receiver.requests).toHaveLength(0);

            tell.mockRestore();
            held.forEach((webhook) => engine.webhookChanged(webhook));
            await eventually(async () => (receiver.requests.length === 1 ? true : undefined), { timeoutMs: 5_000 });
            expect(heightOf(receiver.requests[0].body)).toBe(1);
        });
    });

    describe("a webhook without conditions disabled between its event and the engine's reading of it", () => {
        // Such a webhook is owed its events in the engine (they name it in a group): an event of
        // when it was enabled is owed to it all the same, and waits until it is enabled again.
        it("delivers the event once it is enabled again", async () => {
            const receiver = await new Receiver().start();
            receivers.push(receiver);
            running = await startPlugin({}, { engine: "inline" });
            const engine = running.plugin.engine;
            const id = await createWebhook(running, receiver.url);
            // The engine's pass for the new webhook is over: from here only a wake starts one.
            await turnsOfTheLoop(2);
            const wake = jest.spyOn(engine, "wake").mockImplementation(() => undefined);

            running.plugin.listener.handle({ name: "block.applied", data: { height: 1 } });
            const disable = await requestJson(`${running.url}/webhooks/${id}`, {
                method: "PUT",
                body: { enabled: false },
            });
            expect(disable.status).toBe(204);
            wake.mockRestore();
            engine.wake();
            const outbox = running.plugin.outbox;
            await eventually(async () => (outbox.pendingWebhookIds().includes(id) ? true : undefined), {
                intervalMs: 10,
            });
            engine.wake();
            await turnsOfTheLoop(2);
            expect(await engine.origins()).toEqual([]);
            expect(receiver.requests).toHaveLength(0);

            await requestJson(`${running.url}/webhooks/${id}`, { method: "PUT", body: { enabled: true } });
            await eventually(async () => (receiver.requests.length === 1 ? true : undefined), { timeoutMs: 5_000 });
            expect(heightOf(receiver.requests[0].body)).toBe(1);
        });
    });

    describe("GET /metrics", () => {
        it("counts events, deliveries by outcome, attempt durations and each origin's concurrency", async () => {
            const receiver = await new Receiver().start();
            receivers.push(receiver);
            running = await startPlugin();
            await createWebhook(running, receiver.url);
            for (let height = 1; height <= 5; height++) {
                running.plugin.listener.handle({ name: "block.applied", data: { height } });
            }
            running.plugin.listener.handle({ name: "round.created", data: {} });

            const { status, type, text } = await eventually(async () => {
                const scraped = await metricsText(running!);
                return sample(scraped.text, 'core_wallet_webhooks_delivery_attempts_total{outcome="delivered"}') === 5
                    ? scraped
                    : undefined;
            });

            expect(status).toBe(200);
            expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
            expect(sample(text, 'core_wallet_webhooks_events_seen_total{event="block.applied"}')).toBe(5);
            expect(sample(text, 'core_wallet_webhooks_events_seen_total{event="round.created"}')).toBe(1);
            expect(sample(text, 'core_wallet_webhooks_events_journaled_total{event="block.applied"}')).toBe(5);
            expect(sample(text, 'core_wallet_webhooks_events_journaled_total{event="round.created"}')).toBeUndefined();
            expect(sample(text, "core_wallet_webhooks_attempt_duration_seconds_count")).toBe(5);
            expect(sample(text, "core_wallet_webhooks_deliveries_pending")).toBe(0);
            expect(sample(text, "core_wallet_webhooks_deliveries_dead")).toBe(0);
            expect(sample(text, "core_wallet_webhooks_journal_backlog")).toBe(0);
            expect(sample(text, "core_wallet_webhooks_storage_degraded")).toBe(0);
            expect(sample(text, "core_wallet_webhooks_engine_up")).toBe(1);
            expect(sample(text, "core_wallet_webhooks_engine_restarts_total")).toBe(0);
            const origin = `http://127.0.0.1:${receiver.port}`;
            expect(sample(text, `core_wallet_webhooks_origin_concurrency{origin="${origin}"}`)).toBeGreaterThanOrEqual(
                1,
            );
            expect(sample(text, `core_wallet_webhooks_origin_in_flight{origin="${origin}"}`)).toBe(0);
        });

        it("asks for the API key as the API does", async () => {
            running = await startPlugin({ server: { apiKey: "metrics-secret" } });

            expect((await metricsText(running)).status).toBe(403);
            const allowed = await metricsText(running, { authorization: "Bearer metrics-secret" });
            expect(allowed.status).toBe(200);
            expect(sample(allowed.text, "core_wallet_webhooks_engine_up")).toBe(1);
        });
    });
});
