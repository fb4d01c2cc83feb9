import { Client } from "pg";

import { UnknownRegisterPolicy } from "../../src/contracts";
import { SCHEMA } from "../../src/cluster/postgres-schema";
import { eventually, requestJson } from "../support/http";
import { RunningPlugin, startPlugin } from "../support/plugin-harness";
import { startTestPostgres, TestPostgres } from "../support/postgres";

jest.setTimeout(120_000);

interface RegisterState {
    driver: string;
    following: boolean;
    reason: string | null;
}

const relayOptions = (url: string, unknownRegister: UnknownRegisterPolicy = "refuse") => ({
    storage: { driver: "postgres" as const, postgres: { url, connectionTimeoutMs: 2_000, unknownRegister } },
});

const create = (relay: RunningPlugin) =>
    requestJson<{ data: { id: string } }>(`${relay.url}/webhooks`, {
        method: "POST",
        body: { event: "block.applied", target: "http://127.0.0.1:9/hook", conditions: [] },
    });

const registerOf = async (relay: RunningPlugin): Promise<RegisterState> =>
    (await requestJson<{ data: { storage: { register: RegisterState } } }>(relay.url)).body.data.storage.register;

const until = <T>(probe: () => Promise<T | undefined>): Promise<T> =>
    eventually(probe, { timeoutMs: 40_000, intervalMs: 100 });

describe("a relay meeting a shared register it did not follow before (dropped, restored, another database)", () => {
    let postgres: TestPostgres;
    let admin: Client;
    const relays: RunningPlugin[] = [];

    const sharedIds = async (): Promise<string[]> =>
        (await admin.query<{ id: string }>(`SELECT id FROM ${SCHEMA}.webhooks ORDER BY id`)).rows.map(({ id }) => id);

    beforeAll(async () => {
        postgres = await startTestPostgres();
        admin = new Client({ connectionString: postgres.url });
        await admin.connect();
    });

    afterAll(async () => {
        await Promise.all(relays.map((relay) => relay.stop().catch(() => undefined)));
        await admin?.end();
        await postgres?.remove();
    });

    it("keeps its copy when the schema is dropped under it or before its restart, says so at error level and in GET /api, and writes nothing there; offers its copy back when told to", async () => {
        const relay = await startPlugin(relayOptions(postgres.url));
        relays.push(relay);
        const kept = [(await create(relay)).body.data.id, (await create(relay)).body.data.id].sort();
        expect(await sharedIds()).toEqual(kept);

        await admin.query(`DROP SCHEMA ${SCHEMA} CASCADE`);
        // Running: the register is asked who it is, met again, and refused.
        const refused = await until(async () => {
            const state = await registerOf(relay);
            return state.following === false && /not the one this relay followed/.test(state.reason ?? "")
                ? state
                : undefined;
        });
        expect(refused.reason).toMatch(/This relay keeps serving its own copy of 2 webhooks and writes nothing there/);
        expect(relay.logs.join("\n")).toMatch(
            /error: .*cannot follow the shared register .*not the one this relay followed/,
        );
        for (const id of kept) {
            expect((await requestJson(`${relay.url}/webhooks/${id}`)).status).toBe(200);
        }
        const write = await create(relay);
        expect(write.status).toBe(503);
        expect(write.text).toMatch(/not the one this relay followed/);
        expect(await sharedIds()).toEqual([]);

        // Restarted on the same files: still refused, still its copy.
        await relay.stop({ keepFiles: true });
        relays.pop();
        const restarted = await startPlugin(relayOptions(postgres.url), { dir: relay.dir });
        relays.push(restarted);
        expect((await registerOf(restarted)).following).toBe(false);
        expect((await requestJson<{ data: unknown[] }>(`${restarted.url}/webhooks`)).body.data).toHaveLength(2);
        expect(await sharedIds()).toEqual([]);

        // A relay with no webhooks of its own follows the new register: it has nothing to lose.
        const empty = await startPlugin(relayOptions(postgres.url));
        relays.push(empty);
        expect(await registerOf(empty)).toMatchObject({ following: true, reason: null });

        // Told to offer its copy: the shared register gets it back, and every relay follows it.
        await restarted.stop({ keepFiles: true });
        relays.splice(relays.indexOf(restarted), 1);
        const offering = await startPlugin(relayOptions(postgres.url, "offer"), { dir: relay.dir });
        relays.push(offering);
        expect(await registerOf(offering)).toMatchObject({ following: true, reason: null });
        expect(await sharedIds()).toEqual(kept);
        expect(offering.logs.join("\n")).toMatch(
            /offered this relay's copy to a shared register it did not follow before .*: 2 webhooks added/,
        );
        await until(async () =>
            (await requestJson<{ data: unknown[] }>(`${empty.url}/webhooks`)).body.data.length === 2 ? true : undefined,
        );
        expect((await create(offering)).status).toBe(201);
    });
});
