import { Webhook as StandardWebhook } from "standardwebhooks";

import { Delivery } from "../../src/contracts";
import { eventually, requestJson } from "../support/http";
import { freePort } from "../support/ports";
import { RunningPlugin, startPlugin } from "../support/plugin-harness";
import { answer, Receiver } from "../support/receiver";

const FAST_RETRIES = { retryScheduleSeconds: [0.05, 0.1, 0.1, 0.1] };

interface Created {
    id: string;
    token: string;
}

const createWebhook = async (running: RunningPlugin, body: Record<string, unknown>): Promise<Created> => {
    const response = await requestJson<{ data: Created }>(`${running.url}/webhooks`, {
        method: "POST",
        body: { event: "block.applied", conditions: [], ...body },
    });
    expect(response.status).toBe(201);
    return response.body.data;
};

const deliveriesOf = (running: RunningPlugin, webhookId: string): Delivery[] =>
    running.plugin.outbox.page(webhookId, 0, 1000).deliveries;

const settled = async (running: RunningPlugin, webhookId: string, count: number, receiver?: Receiver) => {
    try {
        return await eventually(
            async () => {
                const deliveries = deliveriesOf(running, webhookId);
                return deliveries.length === count && deliveries.every((delivery) => delivery.status !== "pending")
                    ? deliveries
                    : undefined;
            },
            { timeoutMs: 20_000, intervalMs: 20 },
        );
    } catch (error) {
        // What a rare failure needs to be understood: where each delivery and the engine stood.
        const deliveries = deliveriesOf(running, webhookId).map((delivery) => ({
            ...delivery,
            body: undefined,
            attemptsMade: running.plugin.outbox.attempts(delivery.id),
        }));
        const state = {
            deliveries,
            received: receiver?.requests.map(({ receivedAt }) => receivedAt),
            origins: await running.plugin.engine.origins(),
            now: Date.now(),
        };
        throw new Error(`${String(error)}: ${JSON.stringify(state)}`);
    }
};

describe("delivery to a real receiver", () => {
    let running: RunningPlugin | undefined;
    let receiver: Receiver | undefined;

    afterEach(async () => {
        await running?.stop();
        await receiver?.stop();
        running = undefined;
        receiver = undefined;
    });

    it("posts ARK's body with Authorization and a Standard Webhooks signature", async () => {
        receiver = await new Receiver().start();
        running = await startPlugin();
        const webhook = await createWebhook(running, { target: receiver.url });

        running.plugin.listener.handle({ name: "block.applied", data: { height: 7, reward: "200000000" } });
        const [delivery] = await settled(running, webhook.id, 1);

        expect(delivery.status).toBe("delivered");
        const [request] = receiver.requests;
        const body = JSON.parse(request.body);
        expect(body).toEqual({
            timestamp: expect.any(Number),
            event: "block.applied",
            data: { height: 7, reward: "200000000" },
        });
        expect(request.headers.authorization).toBe(webhook.token.slice(0, 32));
        expect(request.headers["webhook-id"]).toBe(delivery.id);
        const verifier = new StandardWebhook(Buffer.from(webhook.token, "hex"), { format: "raw" });
        expect(verifier.verify(request.body, request.headers as Record<string, string>)).toEqual(body);
        // Announced once the outcome is written, from the engine's thread: it may come a moment after.
        await eventually(async () => (running!.kernelEvents.length > 0 ? true : undefined), { intervalMs: 10 });
        expect(running.kernelEvents.map((event) => event.name)).toEqual(["webhooks.broadcasted"]);
    });

    it("delivers only to webhooks of the event whose conditions hold", async () => {
        receiver = await new Receiver().start();
        running = await startPlugin();
        const wanted = await createWebhook(running, {
            event: "transaction.applied",
            target: receiver.url,
            conditions: [{ key: "recipientId", condition: "eq", value: "A-me" }],
        });

        running.plugin.listener.handle({ name: "transaction.applied", data: { recipientId: "A-other" } });
        running.plugin.listener.handle({ name: "transaction.applied", data: { recipientId: "A-me" } });
        running.plugin.listener.handle({ name: "block.applied", data: { recipientId: "A-me" } });
        await settled(running, wanted.id, 1);

        expect(receiver.requests.map((request) => JSON.parse(request.body).data.recipientId)).toEqual(["A-me"]);
    });

    it("retries a 500 and keeps one webhook-id across attempts", async () => {
        receiver = await new Receiver((request, index, response) =>
            answer(index < 2 ? 500 : 200)(request, index, response),
        ).start();
        running = await startPlugin({ delivery: FAST_RETRIES });
        const webhook = await createWebhook(running, { target: receiver.url });

        running.plugin.listener.handle({ name: "block.applied", data: { height: 1 } });
        const [delivery] = await settled(running, webhook.id, 1);

        expect(delivery.status).toBe("delivered");
        expect(receiver.requests).toHaveLength(3);
        expect(new Set(receiver.requests.map((request) => request.headers["webhook-id"]))).toEqual(
            new Set([delivery.id]),
        );
        expect(running.plugin.outbox.attempts(delivery.id).map((attempt) => attempt.statusCode)).toEqual([
            500, 500, 200,
        ]);
    });

    it("delivers everything once a receiver that was down comes up, each under one stable id", async () => {
        const port = await freePort();
        running = await startPlugin({ delivery: { retryScheduleSeconds: [0.05, 0.2, 0.2, 0.2, 0.2, 0.2] } });
        const webhook = await createWebhook(running, { target: `http://127.0.0.1:${port}/hook` });

        for (let height = 1; height <= 20; height++) {
            running.plugin.listener.handle({ name: "block.applied", data: { height } });
        }
        await eventually(async () => {
            const owed = deliveriesOf(running!, webhook.id);
            return owed.length === 20 && owed.every((d) => d.attempts >= 1) ? true : undefined;
        });
        receiver = await new Receiver().start(port);
        const deliveries = await settled(running, webhook.id, 20);

        expect(deliveries.every((delivery) => delivery.status === "delivered")).toBe(true);
        const heights = receiver.requests.map((request) => JSON.parse(request.body).data.height).sort((a, b) => a - b);
        expect(heights).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
        const ids = receiver.requests.map((request) => request.headers["webhook-id"]);
        expect(new Set(ids).size).toBe(20);
        expect(new Set(ids)).toEqual(new Set(deliveries.map((delivery) => delivery.id)));
        expect(running.plugin.outbox.attempts(deliveries[0].id)[0].error).toMatch(/ECONNREFUSED|fetch failed|connect/i);
    });

    it("does not hold other webhooks' deliveries behind a slow receiver's backlog", async () => {
        receiver = await new Receiver((request, index, response) => {
            setTimeout(() => answer(200)(request, index, response), 100);
        }).start();
        const fast = await new Receiver().start();
        try {
            // One attempt at a time per target, and a backlog larger than the dispatcher's concurrency.
            running = await startPlugin({ delivery: { concurrency: 10, concurrencyPerTarget: 1 } });
            await createWebhook(running, { event: "block.applied", target: receiver.url });
            await createWebhook(running, { event: "block.forged", target: fast.url });
            for (let height = 1; height <= 60; height++) {
                running.plugin.listener.handle({ name: "block.applied", data: { height } });
            }
            running.plugin.listener.handle({ name: "block.forged", data: { height: 61 } });

            await eventually(async () => (fast.requests.length === 1 ? true : undefined), { timeoutMs: 20_000 });

            // The slow receiver answers one request per 100 ms: it has seen only a few of its 60 so far.
            expect(receiver.requests.length).toBeLessThan(10);
        } finally {
            await fast.stop();
        }
    }, 30_000);

    it("retries a receiver slower than the timeout", async () => {
        receiver = await new Receiver((request, index, response) => {
            setTimeout(() => answer(200)(request, index, response), index === 0 ? 1500 : 0);
        }).start();
        running = await startPlugin({ delivery: { ...FAST_RETRIES, timeoutMs: 300 } });
        const webhook = await createWebhook(running, { target: receiver.url });

        running.plugin.listener.handle({ name: "block.applied", data: {} });
        const [delivery] = await settled(running, webhook.id, 1);

        const attempts = running.plugin.outbox.attempts(delivery.id);
        expect(delivery.status).toBe("delivered");
        expect(attempts[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/timeout|aborted/i) });
        expect(attempts[1].statusCode).toBe(200);
    });

    it("waits as long as a 429's Retry-After asks", async () => {
        receiver = await new Receiver((request, index, response) =>
            answer(index === 0 ? 429 : 200, index === 0 ? { "retry-after": "1" } : {})(request, index, response),
        ).start();
        running = await startPlugin({ delivery: FAST_RETRIES });
        const webhook = await createWebhook(running, { target: receiver.url });

        running.plugin.listener.handle({ name: "block.applied", data: {} });
        await settled(running, webhook.id, 1, receiver);

        expect(receiver.requests[1].receivedAt - receiver.requests[0].receivedAt).toBeGreaterThanOrEqual(950);
    });

    it("holds a disabled webhook's pending deliveries, and sends them when it is enabled again", async () => {
        receiver = await new Receiver(answer(503)).start();
        running = await startPlugin({ delivery: { retryScheduleSeconds: [0.3, 0.3, 0.3, 0.3, 0.3] } });
        const webhook = await createWebhook(running, { target: receiver.url });
        running.plugin.listener.handle({ name: "block.applied", data: { height: 1 } });
        running.plugin.listener.handle({ name: "block.applied", data: { height: 2 } });
        await eventually(async () => (receiver!.requests.length >= 2 ? true : undefined));

        const disable = await requestJson(`${running.url}/webhooks/${webhook.id}`, {
            method: "PUT",
            body: { enabled: false },
        });
        expect(disable.status).toBe(204);
        const sentBefore = receiver.requests.length;
        // A webhook on the same schedule whose receiver still fails: once it has been retried
        // twice, the disabled one's retries (due sooner) would have gone out too.
        receiver.behaviour = (request, index, response) =>
            (request.url.includes("sentinel") ? answer(503) : answer(200))(request, index, response);
        const sentinel = await createWebhook(running, { target: `${receiver.url}?sentinel` });
        running.plugin.listener.handle({ name: "block.applied", data: { height: 3 } });
        const sentinelRequests = (): number =>
            receiver!.requests.filter((request) => request.url.includes("sentinel")).length;
        await eventually(async () => (sentinelRequests() >= 3 ? true : undefined));
        await requestJson(`${running.url}/webhooks/${sentinel.id}`, { method: "DELETE" });
        const sentToIt = (): number => receiver!.requests.filter((request) => !request.url.includes("sentinel")).length;

        // At most an attempt already under way when it was disabled; no retry, no new delivery.
        expect(sentToIt() - sentBefore).toBeLessThanOrEqual(1);
        expect(deliveriesOf(running, webhook.id)).toHaveLength(2);
        expect(deliveriesOf(running, webhook.id).some((delivery) => delivery.status === "pending")).toBe(true);

        await requestJson(`${running.url}/webhooks/${webhook.id}`, { method: "PUT", body: { enabled: true } });
        const delivered = await settled(running, webhook.id, 2);
        expect(delivered.every((delivery) => delivery.status === "delivered")).toBe(true);
    });

    it("goes on delivering after a webhook is deleted while its attempt is under way", async () => {
        const answered = new Set<string>();
        receiver = await new Receiver((request, _index, response) => {
            const delay = request.url?.includes("slow") ? 500 : 0;
            setTimeout(() => response.writeHead(200).end("ok", () => answered.add(request.url)), delay);
        }).start();
        running = await startPlugin();
        const doomed = await createWebhook(running, { target: `${receiver.url}?slow` });
        await createWebhook(running, { target: receiver.url });
        const heightsOf = (path: string): number[] =>
            receiver!.requests
                .filter((request) => request.url === path)
                .map((request) => (JSON.parse(request.body) as { data: { height: number } }).data.height);

        running.plugin.listener.handle({ name: "block.applied", data: { height: 1 } });
        await eventually(async () => (heightsOf("/hook?slow").length === 1 ? true : undefined));
        const removal = await requestJson(`${running.url}/webhooks/${doomed.id}`, { method: "DELETE" });
        expect(removal.status).toBe(204);
        // Its answer comes after the delete: its outcome has no delivery left to be written to.
        await eventually(async () => (answered.has("/hook?slow") ? true : undefined));
        await eventually(async () =>
            (await running!.plugin.engine.origins()).every((origin) => origin.inFlight === 0) ? true : undefined,
        );
        running.plugin.listener.handle({ name: "block.applied", data: { height: 2 } });

        await eventually(async () => (heightsOf("/hook").length === 2 ? true : undefined), { timeoutMs: 5_000 });
        expect(heightsOf("/hook")).toEqual([1, 2]);
        expect(heightsOf("/hook?slow")).toEqual([1]);
    });

    it("disables a webhook answered 410 Gone, and sends it nothing more", async () => {
        receiver = await new Receiver(answer(410)).start();
        running = await startPlugin({ delivery: FAST_RETRIES });
        const webhook = await createWebhook(running, { target: receiver.url });

        running.plugin.listener.handle({ name: "block.applied", data: {} });
        const [delivery] = await settled(running, webhook.id, 1);
        await eventually(async () => (running!.plugin.register.find(webhook.id)?.enabled === false ? true : undefined));
        running.plugin.listener.handle({ name: "block.applied", data: {} });

        expect(delivery.status).toBe("failed");
        expect(deliveriesOf(running, webhook.id)).toHaveLength(1);
        expect(receiver.requests).toHaveLength(1);
        expect(running.kernelEvents.map((event) => event.name)).toEqual(["webhooks.failed"]);
    });

    it("fails other 4xx at once without retrying", async () => {
        receiver = await new Receiver(answer(400)).start();
        running = await startPlugin({ delivery: FAST_RETRIES });
        const webhook = await createWebhook(running, { target: receiver.url });

        running.plugin.listener.handle({ name: "block.applied", data: {} });
        const [delivery] = await settled(running, webhook.id, 1);

        expect(delivery).toMatchObject({ status: "failed", attempts: 1 });
        expect(receiver.requests).toHaveLength(1);
    });

    it("declares a delivery dead after the last retry and disables a webhook whose deliveries keep dying", async () => {
        receiver = await new Receiver(answer(503)).start();
        running = await startPlugin({
            delivery: { retryScheduleSeconds: [0.01, 0.01], autoDisableAfterDeadDeliveries: 2 },
        });
        const webhook = await createWebhook(running, { target: receiver.url });

        running.plugin.listener.handle({ name: "block.applied", data: { n: 1 } });
        running.plugin.listener.handle({ name: "block.applied", data: { n: 2 } });
        const deliveries = await settled(running, webhook.id, 2);
        await eventually(async () => (running!.plugin.register.find(webhook.id)?.enabled === false ? true : undefined));

        expect(deliveries.map((delivery) => [delivery.status, delivery.attempts])).toEqual([
            ["dead", 3],
            ["dead", 3],
        ]);
        expect(running.logs.join("\n")).toMatch(/disabled webhook .*2 deliveries in a row died/);
    });

    it("never connects to a name that resolves to the cloud metadata address", async () => {
        running = await startPlugin(
            { delivery: FAST_RETRIES },
            { resolve: (_hostname, callback) => callback(null, [{ address: "169.254.169.254", family: 4 }]) },
        );
        const byName = await createWebhook(running, { target: "http://metadata.internal.test/latest" });
        const byLiteral = await createWebhook(running, { target: "http://169.254.169.254/latest" });

        running.plugin.listener.handle({ name: "block.applied", data: {} });
        const [named] = await settled(running, byName.id, 1);
        const [literal] = await settled(running, byLiteral.id, 1);

        for (const delivery of [named, literal]) {
            expect(delivery.status).toBe("failed");
            expect(running.plugin.outbox.attempts(delivery.id)[0].error).toMatch(
                /169\.254\.169\.254 is in delivery\.denyTargets/,
            );
        }
    });

    it("checks the address each connection resolves to, not only the name given at creation", async () => {
        receiver = await new Receiver().start();
        let address = "127.0.0.1";
        running = await startPlugin(
            { delivery: { ...FAST_RETRIES, denyTargets: ["169.254.0.0/16", "10.0.0.0/8"] } },
            { resolve: (_hostname, callback) => callback(null, [{ address, family: 4 }]) },
        );
        const webhook = await createWebhook(running, { target: `http://receiver.test:${receiver.port}/hook` });

        running.plugin.listener.handle({ name: "block.applied", data: { n: 1 } });
        await settled(running, webhook.id, 1);
        address = "10.1.2.3";
        receiver.requests.length = 0;
        await running.plugin.stop();
        running = await startPlugin(
            { delivery: { ...FAST_RETRIES, denyTargets: ["10.0.0.0/8"] } },
            { dir: running.dir, resolve: (_hostname, callback) => callback(null, [{ address, family: 4 }]) },
        );
        running.plugin.listener.handle({ name: "block.applied", data: { n: 2 } });
        const deliveries = await settled(running, webhook.id, 2);

        expect(deliveries[0].status).toBe("failed");
        expect(receiver.requests).toHaveLength(0);
    });
});
