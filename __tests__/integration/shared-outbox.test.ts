import { Client } from "pg";

import { SharedDeliveries } from "../../src/cluster/postgres-outbox";
import { PostgresDeliveries } from "../../src/cluster/postgres-deliveries";
import { SCHEMA } from "../../src/cluster/postgres-schema";
import { AttemptOutcome } from "../../src/store/delivery-store";
import { MemoryOutbox, MemorySharedDeliveries, owedDelivery } from "../support/memory-outbox";
import { startTestPostgres, TestPostgres } from "../support/postgres";

jest.setTimeout(120_000);

const owed = owedDelivery;

const outcome = (
    deliveryId: string,
    status: "delivered" | "pending",
    nextAttemptAt: number | null,
): AttemptOutcome => ({
    attempt: {
        deliveryId,
        number: 1,
        startedAt: 1_000,
        durationMs: 5,
        statusCode: status === "delivered" ? 200 : 503,
        error: null,
        responseExcerpt: "",
    },
    status,
    nextAttemptAt,
});

interface Outboxes {
    /** The shared outbox as relay `name` sees it. */
    relay(name: string): SharedDeliveries;
    close(): Promise<void>;
}

const inMemory = async (): Promise<Outboxes> => {
    const outbox = new MemoryOutbox("postgres");
    return { relay: (name) => new MemorySharedDeliveries(outbox, name), close: async () => undefined };
};

let postgres: TestPostgres | undefined;

const inPostgres = async (): Promise<Outboxes> => {
    postgres ??= await startTestPostgres();
    const url = postgres.url;
    const opened: PostgresDeliveries[] = [];
    const relay = (name: string): PostgresDeliveries => {
        const deliveries = new PostgresDeliveries({ url, poolSize: 2, connectionTimeoutMs: 5_000 }, name);
        opened.push(deliveries);
        return deliveries;
    };
    // A first statement migrates the schema; then a clean outbox and the webhooks it may hold.
    await relay("setup").nextDueAfter(0);
    const client = new Client({ connectionString: url });
    await client.connect();
    await client.query(`TRUNCATE ${SCHEMA}.webhooks CASCADE`);
    await client.query(
        `INSERT INTO ${SCHEMA}.webhooks (id, event, target, enabled, conditions, match, token, created_at, updated_at)
         SELECT id, 'block.applied', 'http://127.0.0.1:1/hook', true, '[]', 'any', 'token', 0, 0
         FROM unnest(ARRAY['w1', 'w2']) AS id`,
    );
    await client.end();
    return { relay, close: async () => void (await Promise.all(opened.map((deliveries) => deliveries.close()))) };
};

afterAll(async () => {
    await postgres?.remove();
});

/**
 * What the dispatcher's PostgreSQL driver relies on, held against PostgreSQL itself and against the
 * in-memory stand-in the dispatcher's fake-clock unit tests run on: the stand-in may not promise
 * what PostgreSQL does not do.
 */
describe.each([
    ["in memory (the unit tests' stand-in)", inMemory],
    ["in PostgreSQL", inPostgres],
])("the shared outbox %s", (_name, open) => {
    let outboxes: Outboxes;

    beforeEach(async () => {
        outboxes = await open();
    });

    afterEach(async () => {
        await outboxes.close();
    });

    it("keeps a delivery forwarded by two relays once, and leases it to one of them", async () => {
        const [a, b] = [outboxes.relay("a"), outboxes.relay("b")];
        await a.forward([owed("d1", "w1", 1_000)]);
        await b.forward([owed("d1", "w1", 1_000)]);

        expect((await a.claim("w1", 1_000, 10, 5_000)).map((delivery) => delivery.id)).toEqual(["d1"]);
        expect(await b.claim("w1", 1_000, 10, 5_000)).toEqual([]);
        expect(await b.dueWebhookIds(4_999)).toEqual([]);
    });

    it("gives a delivery whose lease ran out to another relay, and passes over the first relay's late outcome", async () => {
        const [a, b] = [outboxes.relay("a"), outboxes.relay("b")];
        await a.forward([owed("d1", "w1", 1_000)]);
        await a.claim("w1", 1_000, 10, 2_000);

        expect(await b.dueWebhookIds(2_500)).toEqual(["w1"]);
        expect((await b.claim("w1", 2_500, 10, 9_000)).map((delivery) => delivery.id)).toEqual(["d1"]);
        await a.recordAll([outcome("d1", "pending", 50_000)]);
        await b.recordAll([outcome("d1", "delivered", null)]);

        expect(await a.nextDueAfter(0)).toBeNull();
        expect(await a.dueWebhookIds(100_000)).toEqual([]);
    });

    it("makes a released delivery due at once, and lets no relay release another's lease", async () => {
        const [a, b] = [outboxes.relay("a"), outboxes.relay("b")];
        await a.forward([owed("d1", "w1", 1_000)]);
        await a.claim("w1", 1_000, 10, 60_000);

        await b.release(["d1"], 1_500);
        expect(await b.claim("w1", 1_500, 10, 60_000)).toEqual([]);

        await a.release(["d1"], 1_500);
        expect((await b.claim("w1", 1_500, 10, 60_000)).map((delivery) => delivery.id)).toEqual(["d1"]);
    });

    it("claims soonest first, and tells which webhooks have due work and when the next falls due", async () => {
        const a = outboxes.relay("a");
        await a.forward([owed("d3", "w1", 1_500), owed("d1", "w1", 1_000), owed("d2", "w2", 5_000)]);

        expect(await a.dueWebhookIds(2_000)).toEqual(["w1"]);
        expect(await a.nextDueAfter(2_000)).toBe(5_000);
        expect((await a.claim("w1", 2_000, 1, 60_000)).map((delivery) => delivery.id)).toEqual(["d1"]);
        expect((await a.claim("w1", 2_000, 5, 60_000)).map((delivery) => delivery.id)).toEqual(["d3"]);
        expect(await a.claim("w2", 2_000, 5, 60_000)).toEqual([]);
    });
});
