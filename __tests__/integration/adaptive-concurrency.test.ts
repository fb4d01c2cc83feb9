import { OriginLoad } from "../../src/contracts";
import { eventually, requestJson } from "../support/http";
import { RunningPlugin, startPlugin } from "../support/plugin-harness";
import { answer, Receiver } from "../support/receiver";

const createWebhook = async (running: RunningPlugin, target: string): Promise<string> => {
    const response = await requestJson<{ data: { id: string } }>(`${running.url}/webhooks`, {
        method: "POST",
        body: { event: "block.applied", conditions: [], target },
    });
    expect(response.status).toBe(201);
    return response.body.data.id;
};

const originsOf = async (running: RunningPlugin): Promise<OriginLoad[]> =>
    (await requestJson<{ data: { deliveries: { origins: OriginLoad[] } } }>(running.url)).body.data.deliveries.origins;

const emit = (running: RunningPlugin, count: number): void => {
    for (let height = 1; height <= count; height++) {
        running.plugin.listener.handle({ name: "block.applied", data: { height } });
    }
};

describe("concurrency that adapts to each receiver's origin", () => {
    let running: RunningPlugin | undefined;
    let receiver: Receiver | undefined;

    afterEach(async () => {
        await running?.stop();
        await receiver?.stop();
        running = undefined;
        receiver = undefined;
    });

    it("opens more connections to a slow but healthy receiver, and shows it in GET /api", async () => {
        let open = 0;
        let mostOpen = 0;
        receiver = await new Receiver((request, index, response) => {
            open++;
            mostOpen = Math.max(mostOpen, open);
            setTimeout(() => {
                open--;
                answer(200)(request, index, response);
            }, 250);
        }).start();
        running = await startPlugin();
        await createWebhook(running, receiver.url);
        emit(running, 300);

        const origins = await eventually(
            async () => {
                const loads = await originsOf(running as RunningPlugin);
                return loads.length === 1 && loads[0].concurrency >= 32 ? loads : undefined;
            },
            { timeoutMs: 20_000, intervalMs: 50 },
        );
        expect(origins[0]).toMatchObject({ origin: `http://127.0.0.1:${receiver.port}`, pausedUntil: null });
        expect(origins[0].latencyMs).toBeGreaterThanOrEqual(250);
        await eventually(async () => (receiver?.requests.length === 300 ? true : undefined), { timeoutMs: 30_000 });
        expect(mostOpen).toBeGreaterThan(4); // the fixed limit before was 4 connections
    }, 60_000);

    it("closes down to the floor on a receiver that resets every connection", async () => {
        receiver = await new Receiver((_request, _index, response) => response.socket?.destroy()).start();
        running = await startPlugin({
            delivery: { retryScheduleSeconds: [0.2, 0.2, 0.2, 0.2, 0.2], concurrencyPerTargetFloor: 1 },
        });
        await createWebhook(running, receiver.url);
        emit(running, 40);

        const origins = await eventually(
            async () => {
                const loads = await originsOf(running as RunningPlugin);
                return loads[0]?.concurrency === 1 ? loads : undefined;
            },
            { timeoutMs: 20_000, intervalMs: 20 },
        );
        expect(origins[0].concurrency).toBe(1);
    }, 30_000);

    // The engine's thread runs at a lower priority than the test's: with two busy loops on this
    // two-core machine, 2 of some 25 runs failed (the first delivery later than 5 s; four
    // deliveries later than 10 s), so the waits are long; the receiver's requests say what came.
    it("pauses the whole origin, every webhook on it, for as long as a 429's Retry-After asks", async () => {
        receiver = await new Receiver((request, index, response) =>
            answer(index === 0 ? 429 : 200, index === 0 ? { "retry-after": "3" } : {})(request, index, response),
        ).start();
        running = await startPlugin({ delivery: { retryScheduleSeconds: [0.05, 0.1] } });
        await createWebhook(running, `http://127.0.0.1:${receiver.port}/first`);
        running.plugin.listener.handle({ name: "block.applied", data: { height: 1 } });
        await eventually(async () => (receiver?.requests.length ? true : undefined), {
            timeoutMs: 20_000,
            intervalMs: 5,
        });
        const pausedAt = receiver.requests[0].receivedAt;
        // Another webhook on the same origin, and the next event: both wait with the origin.
        await createWebhook(running, `http://127.0.0.1:${receiver.port}/second`);
        running.plugin.listener.handle({ name: "block.applied", data: { height: 2 } });
        const paused = await eventually(
            async () => {
                const loads = await originsOf(running as RunningPlugin);
                return loads[0]?.pausedUntil ? loads[0] : undefined;
            },
            { timeoutMs: 3_000, intervalMs: 5 },
        );
        expect(paused.pausedUntil).toBeGreaterThanOrEqual(pausedAt + 2_900);

        // The first event's retry, and the next event at each webhook.
        await eventually(async () => (receiver?.requests.length === 4 ? true : undefined), {
            timeoutMs: 20_000,
        }).catch((error: Error) => {
            const seen = receiver?.requests.map(
                (request) => `${request.url} ${request.body.slice(0, 120)} at +${request.receivedAt - pausedAt} ms`,
            );
            throw new Error(`${error.message}; the receiver had ${JSON.stringify(seen, undefined, 1)}`);
        });
        const afterPause = receiver.requests.slice(1).map((request) => request.receivedAt - pausedAt);
        expect(Math.min(...afterPause)).toBeGreaterThanOrEqual(2_900);
    }, 60_000);

    it("keeps an origin's pause across a restart: nothing goes to it before the pause ends", async () => {
        receiver = await new Receiver((request, index, response) =>
            answer(index === 0 ? 429 : 200, index === 0 ? { "retry-after": "600" } : {})(request, index, response),
        ).start();
        running = await startPlugin({});
        const id = await createWebhook(running, `http://127.0.0.1:${receiver.port}/hook`);
        running.plugin.listener.handle({ name: "block.applied", data: { height: 1 } });
        const paused = await eventually(
            async () => (await originsOf(running as RunningPlugin))[0]?.pausedUntil ?? undefined,
        );
        const dir = running.dir;
        await running.stop({ keepFiles: true });

        running = await startPlugin({}, { dir });
        // A new event for the paused origin: it waits with the origin, the restart notwithstanding.
        running.plugin.listener.handle({ name: "block.applied", data: { height: 2 } });
        const restored = await eventually(async () => (await originsOf(running as RunningPlugin))[0]);
        const pending = await eventually(async () => {
            const { body } = await requestJson<{ data: Array<{ status: string }> }>(
                `${(running as RunningPlugin).url}/webhooks/${id}/deliveries`,
            );
            return body.data.length === 2 ? body.data : undefined;
        });

        expect(restored.pausedUntil).toBe(paused);
        expect(pending.map((delivery) => delivery.status)).toEqual(["pending", "pending"]);
        expect(receiver.requests).toHaveLength(1);
    }, 60_000);

    it("lifts an origin's pause when an operator redelivers or pings: the delivery goes out now, not after the pause", async () => {
        receiver = await new Receiver((request, index, response) =>
            answer(index === 0 ? 503 : 200, index === 0 ? { "retry-after": "600" } : {})(request, index, response),
        ).start();
        running = await startPlugin({});
        const id = await createWebhook(running, `http://127.0.0.1:${receiver.port}/hook`);
        running.plugin.listener.handle({ name: "block.applied", data: { height: 1 } });
        await eventually(async () => ((await originsOf(running as RunningPlugin))[0]?.pausedUntil ? true : undefined));
        const [delivery] = (
            await requestJson<{ data: Array<{ id: string }> }>(`${running.url}/webhooks/${id}/deliveries`)
        ).body.data;

        const redelivered = await requestJson(`${running.url}/webhooks/${id}/deliveries/${delivery.id}/redeliver`, {
            method: "POST",
        });

        expect(redelivered.status).toBe(202);
        await eventually(async () => (receiver?.requests.length === 2 ? true : undefined));
        expect(receiver.requests.map((request) => request.headers["webhook-id"])).toEqual([delivery.id, delivery.id]);
        expect((await originsOf(running))[0].pausedUntil).toBeNull();
    }, 60_000);
});
