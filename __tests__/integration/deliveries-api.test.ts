import { eventually, requestJson } from "../support/http";
import { RunningPlugin, startPlugin } from "../support/plugin-harness";
import { answer, Receiver } from "../support/receiver";

interface DeliveryBody {
    id: string;
    status: string;
    attempts: number | Array<{ number: number; statusCode: number | null; responseExcerpt: string | null }>;
    event: string;
    body?: { event: string; data: unknown };
}

describe("the deliveries of a webhook over HTTP", () => {
    let running: RunningPlugin;
    let receiver: Receiver;
    let webhookId: string;

    beforeEach(async () => {
        receiver = await new Receiver(answer(200)).start();
        running = await startPlugin({ delivery: { retryScheduleSeconds: [0.05] } });
        const created = await requestJson<{ data: { id: string } }>(`${running.url}/webhooks`, {
            method: "POST",
            body: { event: "block.applied", target: receiver.url, conditions: [] },
        });
        webhookId = created.body.data.id;
    });

    afterEach(async () => {
        await running.stop();
        await receiver.stop();
    });

    const list = () =>
        requestJson<{ meta: Record<string, unknown>; data: DeliveryBody[] }>(
            `${running.url}/v2/webhooks/${webhookId}/deliveries?limit=2`,
        );
    const allDelivered = (count: number) =>
        eventually(async () => {
            const { body } = await requestJson<{ data: DeliveryBody[] }>(
                `${running.url}/webhooks/${webhookId}/deliveries`,
            );
            return body.data.length === count && body.data.every((d) => d.status === "delivered")
                ? body.data
                : undefined;
        });

    it("lists deliveries newest first, paginated", async () => {
        for (let height = 1; height <= 3; height++) {
            running.plugin.listener.handle({ name: "block.applied", data: { height } });
        }
        await allDelivered(3);

        const { status, body } = await list();

        expect(status).toBe(200);
        expect(body.meta).toMatchObject({
            count: 2,
            totalCount: 3,
            pageCount: 2,
            next: `/api/v2/webhooks/${webhookId}/deliveries?page=2&limit=2`,
        });
        const shown = await Promise.all(
            body.data.map((delivery) =>
                requestJson<{ data: DeliveryBody }>(`${running.url}/webhooks/${webhookId}/deliveries/${delivery.id}`),
            ),
        );
        expect(shown.map((response) => (response.body.data.body?.data as { height: number }).height)).toEqual([3, 2]);
    });

    it("shows one delivery with its attempts and the start of each response", async () => {
        running.plugin.listener.handle({ name: "block.applied", data: { height: 9 } });
        const [delivery] = await allDelivered(1);

        const { status, body } = await requestJson<{ data: DeliveryBody }>(
            `${running.url}/webhooks/${webhookId}/deliveries/${delivery.id}`,
        );

        expect(status).toBe(200);
        expect(body.data).toMatchObject({ id: delivery.id, status: "delivered", event: "block.applied" });
        expect(body.data.attempts).toEqual([
            expect.objectContaining({ number: 1, statusCode: 200, responseExcerpt: "ok" }),
        ]);
    });

    it("delivers again on request, under the same id", async () => {
        running.plugin.listener.handle({ name: "block.applied", data: { height: 1 } });
        const [delivery] = await allDelivered(1);

        const response = await requestJson(`${running.url}/webhooks/${webhookId}/deliveries/${delivery.id}/redeliver`, {
            method: "POST",
        });
        await eventually(async () => (receiver.requests.length === 2 ? true : undefined));

        expect(response.status).toBe(202);
        expect(receiver.requests.map((request) => request.headers["webhook-id"])).toEqual([delivery.id, delivery.id]);
    });

    it("sends a webhook.ping test event", async () => {
        const response = await requestJson<{ data: { id: string } }>(`${running.url}/webhooks/${webhookId}/ping`, {
            method: "POST",
        });
        await eventually(async () => (receiver.requests.length === 1 ? true : undefined));

        expect(response.status).toBe(202);
        expect(JSON.parse(receiver.requests[0].body)).toMatchObject({ event: "webhook.ping", data: { webhookId } });
        expect(receiver.requests[0].headers["webhook-id"]).toBe(response.body.data.id);
    });

    it("answers a webhook's pings past limits.pingsPerMinute 429 with a Retry-After, owing nothing, and another webhook's pings as before", async () => {
        const ping = (id: string) =>
            requestJson<{ message?: string }>(`${running.url}/webhooks/${id}/ping`, { method: "POST" });
        const statuses: number[] = [];
        for (let index = 0; index < 10; index++) {
            statuses.push((await ping(webhookId)).status);
        }
        expect(statuses).toEqual(Array(10).fill(202));

        const refused = await ping(webhookId);
        expect(refused.status).toBe(429);
        expect(refused.body.message).toMatch(
            new RegExp(
                `^webhook ${webhookId} was pinged 10 times in the last minute \\(limits\\.pingsPerMinute\\): try again in \\d+ s$`,
            ),
        );
        expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
        const owed = await requestJson<{ meta: { totalCount: number } }>(
            `${running.url}/webhooks/${webhookId}/deliveries`,
        );
        expect(owed.body.meta.totalCount).toBe(10);

        const other = await requestJson<{ data: { id: string } }>(`${running.url}/webhooks`, {
            method: "POST",
            body: { event: "block.applied", target: receiver.url, conditions: [] },
        });
        expect((await ping(other.body.data.id)).status).toBe(202);
    });

    it("answers 404 for a delivery of another webhook or none", async () => {
        const response = await requestJson<{ message: string }>(
            `${running.url}/webhooks/${webhookId}/deliveries/not-a-delivery`,
        );
        const redeliver = await requestJson(
            `${running.url}/webhooks/${webhookId}/deliveries/not-a-delivery/redeliver`,
            {
                method: "POST",
            },
        );

        expect(response.status).toBe(404);
        expect(response.body.message).toBe(`delivery not-a-delivery of webhook ${webhookId} was not found`);
        expect(redeliver.status).toBe(404);
    });
});
