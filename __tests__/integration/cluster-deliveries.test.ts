import { mkdtempSync } from "fs";
import { ServerResponse } from "http";
import { tmpdir } from "os";
import { join } from "path";
import { Client } from "pg";

import { SCHEMA } from "../../src/cluster/postgres-schema";
import { RelayProcess } from "../support/child";
import { eventually, requestJson } from "../support/http";
import { leasedBy, startTestPostgres, TestPostgres } from "../support/postgres";
import { answer, Receiver, ReceivedRequest } from "../support/receiver";

jest.setTimeout(180_000);

interface WebhookBody {
    data: { id: string };
}

const createWebhook = async (relayUrl: string, event: string, target: string): Promise<string> => {
    const created = await requestJson<WebhookBody>(`${relayUrl}/webhooks`, {
        method: "POST",
        body: { event, target, enabled: true, conditions: [] },
    });
    expect(created.status).toBe(201);
    return created.body.data.id;
};

const knownEverywhere = (urls: string[], id: string) =>
    eventually(
        async () => {
            const answers = await Promise.all(urls.map((url) => requestJson(`${url}/webhooks/${id}`)));
            return answers.every((shown) => shown.status === 200) ? true : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 50 },
    );

/** What a receiver got: each chain object's webhook-ids, and the requests in all. */
const tally = (requests: readonly ReceivedRequest[]) => {
    const idsByObject = new Map<string, Set<string>>();
    for (const request of requests) {
        const object = (JSON.parse(request.body) as { data: { id: string } }).data.id;
        const ids = idsByObject.get(object) ?? new Set<string>();
        ids.add(String(request.headers["webhook-id"]));
        idsByObject.set(object, ids);
    }
    const webhookIds = new Set(requests.map((request) => String(request.headers["webhook-id"])));
    return { idsByObject, webhookIds, duplicates: requests.length - webhookIds.size };
};

const untilReceived = (receiver: Receiver, objects: number, timeoutMs = 90_000) =>
    eventually(async () => (tally(receiver.requests).idsByObject.size >= objects ? true : undefined), {
        timeoutMs,
        intervalMs: 100,
    });

const deliveryRows = async (url: string, webhookId: string) => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
        const rows = await client.query<{ status: string; count: string }>(
            `SELECT status, COUNT(*) AS count FROM ${SCHEMA}.deliveries WHERE webhook_id = $1 GROUP BY status`,
            [webhookId],
        );
        return Object.fromEntries(rows.rows.map((row) => [row.status, Number(row.count)]));
    } finally {
        await client.end();
    }
};

/** The attempts the relays recorded for a webhook's deliveries that did not deliver them (timeouts, errors, non-2xx). */
const failedAttempts = async (url: string, webhookId: string) => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
        const rows = await client.query<{
            delivery_id: string;
            number: number;
            status_code: number | null;
            error: string | null;
        }>(
            `SELECT a.delivery_id, a.number, a.status_code, a.error FROM ${SCHEMA}.attempts a
             JOIN ${SCHEMA}.deliveries d ON d.id = a.delivery_id
             WHERE d.webhook_id = $1 AND (a.status_code IS NULL OR a.status_code >= 300)`,
            [webhookId],
        );
        return rows.rows;
    } finally {
        await client.end();
    }
};

describe("several relays deliver from one outbox on PostgreSQL, each chain event once", () => {
    let postgres: TestPostgres;
    const relays: RelayProcess[] = [];

    const startRelays = async (count: number): Promise<string[]> => {
        const started = Array.from(
            { length: count },
            (_, n) =>
                new RelayProcess(mkdtempSync(join(tmpdir(), "cww-relay-")), postgres.url, `relay-${relays.length + n}`),
        );
        relays.push(...started);
        return Promise.all(started.map((relay) => relay.url));
    };

    beforeAll(async () => {
        postgres = await startTestPostgres();
    });

    afterEach(async () => {
        await Promise.all(relays.splice(0).map((relay) => relay.stop().catch(() => relay.kill())));
    });

    afterAll(async () => {
        await postgres?.remove();
    });

    it("three relays fed the same 300 blocks deliver each once under one webhook-id; one killed with SIGKILL mid-stream loses nothing", async () => {
        // Answers after 200 ms, so that deliveries are under way when the relay is killed; while `holding`,
        // answers nothing, so that what a relay has under way stays leased until it is killed.
        let holding = false;
        const held: ServerResponse[] = [];
        const answerLater = (response: ServerResponse): unknown =>
            setTimeout(() => response.writeHead(200).end("ok"), 200);
        const receiver = await new Receiver((_request, _index, response) =>
            holding ? held.push(response) : answerLater(response),
        ).start();
        try {
            const urls = await startRelays(3);
            const webhookId = await createWebhook(urls[0], "block.applied", receiver.url);
            await knownEverywhere(urls, webhookId);

            const feeds = relays.map((relay) => relay.feed("block.applied", 1, 300, 5));
            await eventually(async () => (tally(receiver.requests).idsByObject.size >= 50 ? true : undefined), {
                timeoutMs: 30_000,
                intervalMs: 10,
            });
            feeds[2].catch(() => undefined);
            // Seen leased, then killed: with answers held in between, its leases cannot end first (once
            // the killed relay held none, most likely a delivery answered between the look and the kill).
            holding = true;
            await eventually(async () => ((await leasedBy(postgres.url, relays[2].name)) > 0 ? true : undefined), {
                timeoutMs: 10_000,
                intervalMs: 5,
            });
            await relays[2].kill();
            holding = false;
            held.splice(0).forEach((response) => answerLater(response));
            const leasedByKilled = await leasedBy(postgres.url, relays[2].name);
            expect(leasedByKilled).toBeGreaterThan(0);
            await Promise.all(feeds.slice(0, 2));
            await untilReceived(receiver, 300);
            await eventually(
                async () => ((await deliveryRows(postgres.url, webhookId)).delivered === 300 ? true : undefined),
                { timeoutMs: 20_000, intervalMs: 100 },
            );
            expect(await deliveryRows(postgres.url, webhookId)).toEqual({ delivered: 300 });

            const { idsByObject, webhookIds, duplicates } = tally(receiver.requests);
            expect(idsByObject.size).toBe(300);
            // A block delivered twice (in flight at the kill, then taken over) keeps its webhook-id.
            expect([...idsByObject.values()].every((ids) => ids.size === 1)).toBe(true);
            expect(webhookIds.size).toBe(300);
            // Every request beyond one per block is explained: sent under a lease the killed relay held, or
            // an attempt a relay recorded as failed (a timeout on a loaded machine) and retried. A lease
            // running out under a living relay would add requests no record explains.
            const failed = await failedAttempts(postgres.url, webhookId);
            const firstSeen = new Map<string, number>();
            const repeatGapsMs = receiver.requests.flatMap((request) => {
                const id = String(request.headers["webhook-id"]);
                const first = firstSeen.get(id);
                firstSeen.set(id, first ?? request.receivedAt);
                return first === undefined ? [] : [request.receivedAt - first];
            });
            const summary = `SIGKILL run: 300 blocks, 3 relays, ${leasedByKilled} leased by the killed relay and taken over, ${failed.length} failed attempts recorded, ${receiver.requests.length} requests, ${duplicates} duplicates`;
            console.log(
                `${summary}; ms from first to repeated arrival: ${repeatGapsMs.join(", ")}; failed: ${JSON.stringify(failed.slice(0, 5))}`,
            );
            expect(duplicates).toBeLessThanOrEqual(leasedByKilled + failed.length);
        } finally {
            await receiver.stop();
        }
    });

    it("keeps what the relays acknowledged while PostgreSQL is stopped, and delivers it once PostgreSQL is back", async () => {
        const receiver = await new Receiver(answer(200)).start();
        try {
            const urls = await startRelays(2);
            const webhookId = await createWebhook(urls[1], "transaction.applied", receiver.url);
            await knownEverywhere(urls, webhookId);

            await Promise.all(relays.map((relay) => relay.feed("transaction.applied", 1, 100, 2)));
            await untilReceived(receiver, 100);
            await postgres.stop();
            await Promise.all(relays.map((relay) => relay.feed("transaction.applied", 101, 200, 2)));
            // Each relay has the new events as deliveries in its own file: it expanded them, and its
            // forwarding (in the same pass) failed, so they wait there.
            await eventually(
                async () => {
                    const shown = await Promise.all(
                        urls.map((url) => requestJson<{ data: { deliveries: { pending: number | null } } }>(url)),
                    );
                    return shown.every((answer) => (answer.body.data.deliveries.pending ?? 0) >= 100)
                        ? true
                        : undefined;
                },
                { timeoutMs: 20_000, intervalMs: 100 },
            );
            expect(tally(receiver.requests).idsByObject.size).toBe(100);
            await postgres.restart();
            await untilReceived(receiver, 200);

            const { idsByObject, webhookIds, duplicates } = tally(receiver.requests);
            expect(idsByObject.size).toBe(200);
            expect(webhookIds.size).toBe(200);
            expect([...idsByObject.values()].every((ids) => ids.size === 1)).toBe(true);
            await eventually(
                async () => ((await deliveryRows(postgres.url, webhookId)).delivered === 200 ? true : undefined),
                { timeoutMs: 20_000, intervalMs: 100 },
            );
            console.log(`PostgreSQL outage run: 200 events, 2 relays, ${duplicates} duplicates`);
        } finally {
            await receiver.stop();
        }
    });

    it("retries, redelivers, pings, answers the deliveries API and disables webhooks the same through every relay", async () => {
        const flaky = await new Receiver((_request, index, response) =>
            response.writeHead(index === 0 ? 500 : 200).end(),
        ).start();
        const gone = await new Receiver(answer(410)).start();
        const failing = await new Receiver(answer(500)).start();
        try {
            const urls = await startRelays(2);
            const [flakyId, goneId, failingId] = [
                await createWebhook(urls[0], "transaction.applied", flaky.url),
                await createWebhook(urls[0], "block.applied", gone.url),
                await createWebhook(urls[0], "round.missed", failing.url),
            ];
            for (const id of [flakyId, goneId, failingId]) {
                await knownEverywhere(urls, id);
            }

            // Seen by relay 1 only; attempted, retried a second later, and shown by relay 0.
            await relays[1].feed("transaction.applied", 1, 1, 0);
            await eventually(async () => (flaky.requests.length >= 2 ? true : undefined), {
                timeoutMs: 20_000,
                intervalMs: 50,
            });
            const [first, second] = flaky.requests.map((request) => String(request.headers["webhook-id"]));
            expect(second).toBe(first);
            const listed = await eventually(
                async () => {
                    const page = await requestJson<{ data: Array<{ id: string; status: string; attempts: number }> }>(
                        `${urls[0]}/webhooks/${flakyId}/deliveries`,
                    );
                    return page.body.data[0]?.status === "delivered" ? page.body.data : undefined;
                },
                { timeoutMs: 10_000, intervalMs: 50 },
            );
            expect(listed).toEqual([expect.objectContaining({ id: first, status: "delivered", attempts: 2 })]);
            const shown = await requestJson<{ data: { attempts: Array<{ statusCode: number }> } }>(
                `${urls[1]}/webhooks/${flakyId}/deliveries/${first}`,
            );
            expect(shown.body.data.attempts.map((attempt) => attempt.statusCode)).toEqual([500, 200]);

            // Sent again through the other relay, under the same id; a ping through either.
            const again = await requestJson(`${urls[1]}/webhooks/${flakyId}/deliveries/${first}/redeliver`, {
                method: "POST",
            });
            expect(again.status).toBe(202);
            await eventually(async () => (flaky.requests.length >= 3 ? true : undefined), {
                timeoutMs: 10_000,
                intervalMs: 50,
            });
            expect(flaky.requests[2].headers["webhook-id"]).toBe(first);
            const ping = await requestJson<{ data: { id: string } }>(`${urls[0]}/webhooks/${flakyId}/ping`, {
                method: "POST",
            });
            expect(ping.status).toBe(202);
            await eventually(async () => (flaky.requests.length >= 4 ? true : undefined), {
                timeoutMs: 10_000,
                intervalMs: 50,
            });
            expect(flaky.requests[3].headers["webhook-id"]).toBe(ping.body.data.id);

            // 410 Gone disables the webhook on every relay.
            await relays[0].feed("block.applied", 1, 1, 0);
            for (const url of urls) {
                await eventually(
                    async () => {
                        const webhook = await requestJson<{ data: { enabled: boolean } }>(`${url}/webhooks/${goneId}`);
                        return webhook.body.data.enabled ? undefined : true;
                    },
                    { timeoutMs: 10_000, intervalMs: 50 },
                );
            }

            // Five deliveries dead in a row, made by either relay, disable it (autoDisableAfterDeadDeliveries 5).
            await Promise.all([relays[0].feed("round.missed", 1, 3, 0), relays[1].feed("round.missed", 4, 5, 0)]);
            await eventually(
                async () => {
                    const webhook = await requestJson<{ data: { enabled: boolean } }>(
                        `${urls[1]}/webhooks/${failingId}`,
                    );
                    return webhook.body.data.enabled ? undefined : true;
                },
                { timeoutMs: 30_000, intervalMs: 100 },
            );
            expect(failing.requests).toHaveLength(5 * 4);
        } finally {
            await Promise.all([flaky.stop(), gone.stop(), failing.stop()]);
        }
    });
});
