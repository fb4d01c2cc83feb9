import { randomUUID } from "crypto";
import { mkdtempSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { Client } from "pg";

import { SCHEMA } from "../../src/cluster/postgres-schema";
import { eventually, requestJson } from "../support/http";
import { RunningPlugin, startPlugin } from "../support/plugin-harness";
import { startTestPostgres, TestPostgres } from "../support/postgres";
import { Receiver } from "../support/receiver";

jest.setTimeout(120_000);

interface WebhookBody {
    data: { id: string; target: string; enabled: boolean; token?: string };
}

const relayOptions = (url: string) => ({
    storage: { driver: "postgres" as const, postgres: { url, connectionTimeoutMs: 2_000 } },
});

const create = (relay: RunningPlugin, target: string) =>
    requestJson<WebhookBody>(`${relay.url}/webhooks`, {
        method: "POST",
        body: { event: "transaction.applied", target, enabled: true, conditions: [] },
    });

const shown = (relay: RunningPlugin, id: string) => requestJson<WebhookBody>(`${relay.url}/webhooks/${id}`);

/** Waits until the relay shows the webhook as `check` wants it. */
const untilShown = (relay: RunningPlugin, id: string, check: (status: number, body: WebhookBody) => boolean) =>
    eventually(
        async () => {
            const response = await shown(relay, id);
            return check(response.status, response.body) ? response : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 50 },
    );

const transaction = (sequence: number) => ({
    name: "transaction.applied",
    data: { id: `tx-${sequence}`, amount: "1", sequence },
});

describe("several relays on one shared register (storage.driver postgres)", () => {
    let postgres: TestPostgres;
    let relayA: RunningPlugin;
    let relayB: RunningPlugin;
    const receiver = new Receiver();

    beforeAll(async () => {
        postgres = await startTestPostgres();
        await receiver.start();
        relayA = await startPlugin(relayOptions(postgres.url));
        relayB = await startPlugin(relayOptions(postgres.url));
    });

    afterAll(async () => {
        await relayA?.stop();
        await relayB?.stop();
        await receiver.stop();
        await postgres?.remove();
    });

    it("serves a webhook created through one relay on every relay, token shown once, and delivers what any relay sees", async () => {
        const created = await create(relayA, receiver.url);
        expect(created.status).toBe(201);
        expect(created.body.data.token).toMatch(/^[0-9a-f]{64}$/);
        const { id } = created.body.data;

        const onB = await untilShown(relayB, id, (status) => status === 200);
        expect(onB.body.data).toMatchObject({ id, target: receiver.url, enabled: true });
        expect(onB.body.data.token).toBeUndefined();

        const before = receiver.requests.length;
        relayB.plugin.listener.handle(transaction(1));
        const delivery = await eventually(async () => receiver.requests[before], { timeoutMs: 10_000, intervalMs: 50 });
        expect(JSON.parse(delivery.body)).toMatchObject({ event: "transaction.applied", data: { id: "tx-1" } });
        expect(delivery.headers["webhook-signature"]).toMatch(/^v1,/);
    });

    it("delivers a chain event that two relays see once, under one webhook-id, and an event of a relay's own once per relay, naming it", async () => {
        const [chain, deferred, own] = [new Receiver(), new Receiver(), new Receiver()];
        await Promise.all([chain.start(), deferred.start(), own.start()]);
        try {
            const webhooks = [
                { event: "block.applied", target: chain.url, conditions: [] },
                // A regexp condition is tested in the delivery engine's thread, which gives the id there.
                {
                    event: "block.applied",
                    target: deferred.url,
                    conditions: [{ key: "id", condition: "regexp", value: "^block-" }],
                },
                { event: "forger.started", target: own.url, conditions: [] },
            ];
            const ids: string[] = [];
            for (const webhook of webhooks) {
                const created = await requestJson<WebhookBody>(`${relayA.url}/webhooks`, {
                    method: "POST",
                    body: { ...webhook, enabled: true },
                });
                expect(created.status).toBe(201);
                ids.push(created.body.data.id);
            }
            await eventually(async () => (ids.every((id) => relayB.plugin.index.get(id)) ? true : undefined), {
                timeoutMs: 10_000,
                intervalMs: 20,
            });

            for (const relay of [relayA, relayB]) {
                relay.plugin.listener.handle({ name: "block.applied", data: { id: "block-7", height: 7 } });
                relay.plugin.listener.handle({ name: "forger.started", data: { activeDelegates: [] } });
            }
            const webhookIds = async (receiver: Receiver, count: number): Promise<string[]> =>
                (
                    await eventually(async () => (receiver.requests.length >= count ? receiver.requests : undefined), {
                        timeoutMs: 10_000,
                        intervalMs: 20,
                    })
                ).map((request) => String(request.headers["webhook-id"]));

            const ownIds = await webhookIds(own, 2);
            expect(new Set(ownIds).size).toBe(2);
            expect(
                own.requests.map((request) => (JSON.parse(request.body) as { relay?: string }).relay).sort(),
            ).toEqual([relayA, relayB].map((relay) => relay.plugin.options.storage.postgres.relayName).sort());
            const [chainIds, deferredIds] = await Promise.all([webhookIds(chain, 1), webhookIds(deferred, 1)]);
            expect(deferredIds[0]).not.toBe(chainIds[0]);
            expect(JSON.parse(chain.requests[0].body)).not.toHaveProperty("relay");

            // The same chain event again on one relay owes the delivery already made, and holds nothing up.
            relayA.plugin.listener.handle({ name: "block.applied", data: { id: "block-7", height: 7 } });
            relayA.plugin.listener.handle({ name: "block.applied", data: { id: "block-8", height: 8 } });
            await eventually(async () => (chain.requests.length >= 2 ? true : undefined), {
                timeoutMs: 10_000,
                intervalMs: 20,
            });
            expect(JSON.parse(chain.requests[1].body)).toMatchObject({ data: { id: "block-8" } });
            // Each chain event was delivered once, whichever relays saw it.
            expect(chain.requests.map((request) => JSON.parse(request.body).data.id)).toEqual(["block-7", "block-8"]);
            await eventually(async () => (deferred.requests.length >= 2 ? true : undefined), {
                timeoutMs: 10_000,
                intervalMs: 20,
            });
            expect(deferred.requests.map((request) => JSON.parse(request.body).data.id)).toEqual([
                "block-7",
                "block-8",
            ]);
        } finally {
            await Promise.all([chain.stop(), deferred.stop(), own.stop()]);
        }
    });

    it("takes an update, a disable and a delete made on one relay to the other", async () => {
        const { id } = (await create(relayA, receiver.url)).body.data;
        await untilShown(relayB, id, (status) => status === 200);

        const moved = `${receiver.url}/moved`;
        expect(
            (await requestJson(`${relayB.url}/webhooks/${id}`, { method: "PUT", body: { target: moved } })).status,
        ).toBe(204);
        await untilShown(relayA, id, (status, body) => status === 200 && body.data.target === moved);

        expect(
            (await requestJson(`${relayA.url}/webhooks/${id}`, { method: "PUT", body: { enabled: false } })).status,
        ).toBe(204);
        await untilShown(relayB, id, (status, body) => status === 200 && !body.data.enabled);
        expect(relayB.plugin.index.get(id)).toBeUndefined();

        expect((await requestJson(`${relayB.url}/webhooks/${id}`, { method: "DELETE" })).status).toBe(204);
        await untilShown(relayA, id, (status) => status === 404);
        expect((await requestJson(`${relayA.url}/webhooks/${id}`, { method: "DELETE" })).status).toBe(404);
    });

    it("keeps both of two changes made to one webhook through two relays at the same moment", async () => {
        const { id } = (await create(relayA, receiver.url)).body.data;
        await untilShown(relayB, id, (status) => status === 200);

        const moved = `${receiver.url}/both`;
        const answers = await Promise.all([
            requestJson(`${relayA.url}/webhooks/${id}`, { method: "PUT", body: { target: moved } }),
            requestJson(`${relayB.url}/webhooks/${id}`, { method: "PUT", body: { enabled: false } }),
        ]);
        expect(answers.map((answer) => answer.status)).toEqual([204, 204]);
        for (const relay of [relayA, relayB]) {
            await untilShown(
                relay,
                id,
                (status, body) => status === 200 && body.data.target === moved && !body.data.enabled,
            );
        }
    });

    it("moves a relay's own register into the shared one at its first start with it, ids and tokens kept", async () => {
        const alone = await startPlugin();
        const own = (await create(alone, `${receiver.url}/own`)).body.data;
        const status = await requestJson<{ data: { storage: { register: unknown } } }>(alone.url);
        expect(status.body.data.storage.register).toEqual({ driver: "sqlite" });
        // Disabled, its ping waits in the relay's own outbox, and moves in with the register.
        await requestJson(`${alone.url}/webhooks/${own.id}`, { method: "PUT", body: { enabled: false } });
        const ping = await requestJson<{ data: { id: string } }>(`${alone.url}/webhooks/${own.id}/ping`, {
            method: "POST",
        });
        expect(ping.status).toBe(202);
        await alone.stop({ keepFiles: true });

        const joined = await startPlugin(relayOptions(postgres.url), { dir: alone.dir });
        try {
            const onA = await untilShown(relayA, own.id, (status) => status === 200);
            expect(onA.body.data.target).toBe(`${receiver.url}/own`);
            expect(joined.logs.join("\n")).toMatch(/moved this relay's register into the shared register .*: 1 of 1/);
            expect(
                (await requestJson(`${relayA.url}/webhooks/${own.id}`, { method: "PUT", body: { enabled: true } }))
                    .status,
            ).toBe(204);
            const indexed = await eventually(async () => relayA.plugin.index.get(own.id), {
                timeoutMs: 10_000,
                intervalMs: 20,
            });
            expect(indexed.token).toBe(own.token);
            const pinged = await eventually(
                async () => receiver.requests.find((request) => request.headers["webhook-id"] === ping.body.data.id),
                { timeoutMs: 10_000, intervalMs: 50 },
            );
            expect(JSON.parse(pinged.body)).toMatchObject({ event: "webhook.ping" });
        } finally {
            await joined.stop();
        }
    });

    it("imports ARK's webhooks.json into the shared register, ids and tokens kept", async () => {
        const dir = mkdtempSync(join(tmpdir(), "cww-test-ark-"));
        const arkFile = join(dir, "webhooks.json");
        const arkId = randomUUID();
        writeFileSync(
            arkFile,
            JSON.stringify({
                webhooks: [
                    {
                        id: arkId,
                        event: "block.applied",
                        target: `${receiver.url}/ark`,
                        token: "0123456789abcdef0123456789abcdef",
                        enabled: true,
                        conditions: [],
                    },
                ],
            }),
        );
        const joined = await startPlugin(relayOptions(postgres.url), { dir, arkWebhooksFile: arkFile });
        try {
            await untilShown(relayA, arkId, (status) => status === 200);
            expect(relayA.plugin.index.get(arkId)?.token).toBe("0123456789abcdef0123456789abcdef");
        } finally {
            await joined.stop();
        }
    });

    it("answers writes 503 naming the database while PostgreSQL is down, serves its copy, and follows again once it is back", async () => {
        const { id } = (await create(relayA, receiver.url)).body.data;
        await untilShown(relayB, id, (status) => status === 200);

        const registerOf = async (relay: RunningPlugin) =>
            (await requestJson<{ data: { storage: { register: Record<string, unknown> } } }>(relay.url)).body.data
                .storage.register;
        expect(await registerOf(relayB)).toMatchObject({
            driver: "postgres",
            database: expect.stringMatching(/^PostgreSQL at 127\.0\.0\.1:\d+\/core_unitnet$/),
            following: true,
            reason: null,
        });

        await postgres.stop();
        const notFollowing = await eventually(
            async () => {
                const register = await registerOf(relayB);
                return register.following === false ? register : undefined;
            },
            { timeoutMs: 10_000, intervalMs: 50 },
        );
        expect(notFollowing.reason).toEqual(expect.any(String));
        const refused = await create(relayA, receiver.url);
        expect(refused.status).toBe(503);
        expect(refused.text).toMatch(/shared register \(PostgreSQL at 127\.0\.0\.1:\d+\/core_unitnet\) cannot be used/);
        expect(refused.text).not.toMatch(/password/);
        expect((await shown(relayB, id)).status).toBe(200);
        expect((await requestJson<{ data: unknown[] }>(`${relayA.url}/webhooks`)).body.data.length).toBeGreaterThan(0);

        await postgres.restart();
        const created = await eventually(
            async () => {
                const response = await create(relayA, `${receiver.url}/after`);
                return response.status === 201 ? response : undefined;
            },
            { timeoutMs: 30_000, intervalMs: 200 },
        );
        // B's listening connection broke with the outage: it connects again and reads everything.
        await untilShown(relayB, created.body.data.id, (status) => status === 200);
        expect(await registerOf(relayB)).toMatchObject({ following: true, reason: null });
        expect(relayB.logs.join("\n")).toMatch(/cannot follow the shared register/);
    });

    it("tells, at error level and in GET /api, when two relays run under one name, and not for a relay of its own name", async () => {
        // relayA and relayB run under one default name (this host and port 0, as tests bind them).
        const registerOf = async (relay: RunningPlugin) =>
            (await requestJson<{ data: { storage: { register: { duplicateRelayName: string | null } } } }>(relay.url))
                .body.data.storage.register;
        const named = await startPlugin({
            storage: {
                ...relayOptions(postgres.url).storage,
                postgres: { ...relayOptions(postgres.url).storage.postgres, relayName: "relay-of-its-own" },
            },
        });
        try {
            const seen = await eventually(
                async () => {
                    const { duplicateRelayName } = await registerOf(relayB);
                    return duplicateRelayName ?? undefined;
                },
                { timeoutMs: 30_000, intervalMs: 200 },
            );
            expect(seen).toMatch(
                /another relay runs under the name ".+:0" \(seen at .+\): give each relay its own storage\.postgres\.relayName/,
            );
            expect(
                relayB.logs.filter(
                    (line) => line.startsWith("error:") && line.includes("another relay runs under the name"),
                ).length,
            ).toBeGreaterThan(0);
            expect((await registerOf(named)).duplicateRelayName).toBeNull();
        } finally {
            await named.stop();
        }
    });

    it("refuses a shared schema newer than the plugin, naming both versions", async () => {
        const admin = new Client({ connectionString: postgres.url });
        await admin.connect();
        await admin.query(`UPDATE ${SCHEMA}.schema_version SET version = 99`);
        try {
            const newer = await startPlugin(relayOptions(postgres.url));
            try {
                const refused = await create(newer, receiver.url);
                expect(refused.status).toBe(503);
                expect(refused.text).toMatch(/schema version 99 is newer than this plugin's 4; upgrade the plugin/);
            } finally {
                await newer.stop();
            }
        } finally {
            await admin.query(`UPDATE ${SCHEMA}.schema_version SET version = 1`);
            await admin.end();
        }
    });
});
