import { SharedDatabase } from "../../src/cluster/shared-database";
import { startTestPostgres, TestPostgres } from "../support/postgres";

describe("the pool on the shared PostgreSQL", () => {
    let postgres: TestPostgres;
    let database: SharedDatabase | undefined;

    beforeAll(async () => {
        postgres = await startTestPostgres();
    });

    afterEach(async () => {
        await database?.close();
        database = undefined;
    });

    afterAll(async () => {
        await postgres?.remove();
    });

    it("answers twice as many reads at once as it has connections, the first of a run among them (each waits for the migration, none holding a connection)", async () => {
        const poolSize = 4;
        database = new SharedDatabase({ url: postgres.url, poolSize, connectionTimeoutMs: 2_000 });
        const reads = Array.from({ length: poolSize * 2 }, (_, index) =>
            database!.read(
                async (client) => (await client.query<{ n: number }>("SELECT $1::int AS n", [index])).rows[0].n,
            ),
        );

        expect(await Promise.all(reads)).toEqual(Array.from({ length: poolSize * 2 }, (_, index) => index));
    });

    it("runs transactions as many at once as it has connections on a new pool", async () => {
        database = new SharedDatabase({ url: postgres.url, poolSize: 2, connectionTimeoutMs: 2_000 });
        const writes = [1, 2].map((n) =>
            database!.transaction(async (client) => (await client.query("SELECT 1")).rowCount ?? n),
        );

        expect(await Promise.all(writes)).toEqual([1, 1]);
    });
});
