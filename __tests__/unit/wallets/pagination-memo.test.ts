import { Ext as PaginationExt } from "@arkecosystem/core-api/dist/plugins/pagination/ext";
import Boom from "@hapi/boom";
import Hapi from "@hapi/hapi";

import { MAX_KEPT_QUERY_CHARS, PaginationMemo } from "../../../src/wallets/pagination-memo";

interface Listing {
    results: unknown[];
    totalCount: number;
    meta?: Record<string, unknown>;
}

/** A Hapi server with core-api's pagination, through the memo, over a listing the test sets. */
const serverWith = async (
    capacity: number,
): Promise<{
    server: Hapi.Server;
    memo: PaginationMemo;
    paginated: () => number;
    answer: (listing: unknown) => void;
}> => {
    const ext = new PaginationExt({ query: { limit: { default: 100 } } });
    let calls = 0;
    let listing: unknown = { results: [], totalCount: 0 };
    const memo = new PaginationMemo((request, h) => {
        calls++;
        ext.onPostHandler(request, h);
    }, capacity);
    const server = Hapi.server();
    server.ext("onPreHandler", (request, h) => ext.onPreHandler(request, h));
    server.ext("onPostHandler", (request, h) => {
        memo.envelope(request, h);
        return h.continue;
    });
    server.route({
        method: "GET",
        path: "/api/things",
        handler: () => listing,
        options: { plugins: { pagination: { enabled: true } } },
    });
    server.route({ method: "GET", path: "/api/plain", handler: () => ({ results: [1], totalCount: 1 }) });
    await server.initialize();
    return { server, memo, paginated: () => calls, answer: (next) => (listing = next) };
};

const get = async (server: Hapi.Server, url: string): Promise<{ status: number; body: string }> => {
    const response = await server.inject({ method: "GET", url });
    return { status: response.statusCode, body: response.payload };
};

const listingOf = (count: number, totalCount: number, meta?: Record<string, unknown>): Listing => ({
    results: Array.from({ length: count }, (_, index) => ({ index })),
    totalCount,
    ...(meta ? { meta } : {}),
});

describe("core-api's pagination envelope, kept per listing", () => {
    it("answers a listing asked again with the envelope core-api's Ext wrote, without writing it again", async () => {
        const { server, paginated, answer } = await serverWith(8);
        answer(listingOf(2, 9, { totalCountIsEstimate: false }));

        const first = await get(server, "/api/things?page=2&limit=2&orderBy=a:desc");
        const second = await get(server, "/api/things?page=2&limit=2&orderBy=a:desc");

        expect(second).toEqual(first);
        expect(JSON.parse(first.body).meta).toEqual({
            totalCountIsEstimate: false,
            count: 2,
            pageCount: 5,
            totalCount: 9,
            next: "/things?page=3&limit=2",
            previous: "/things?page=1&limit=2",
            self: "/things?page=2&limit=2",
            first: "/things?page=1&limit=2",
            last: "/things?page=5&limit=2",
        });
        expect(paginated()).toBe(1);
    });

    it("writes the envelope again where the query, the total, the page's size or the listing's meta differ", async () => {
        const { server, paginated, answer } = await serverWith(8);
        answer(listingOf(2, 9));
        await get(server, "/api/things?limit=2");
        answer(listingOf(2, 11)); // a block changed the total
        const totalChanged = JSON.parse((await get(server, "/api/things?limit=2")).body).meta;
        answer(listingOf(1, 11));
        const sizeChanged = JSON.parse((await get(server, "/api/things?limit=2")).body).meta;
        answer(listingOf(1, 11, { totalCountIsEstimate: true }));
        const metaChanged = JSON.parse((await get(server, "/api/things?limit=2")).body).meta;
        const queryChanged = JSON.parse((await get(server, "/api/things?limit=2&page=3")).body).meta;

        expect(totalChanged).toMatchObject({ pageCount: 6, totalCount: 11, last: "/things?limit=2&page=6" });
        expect(sizeChanged).toMatchObject({ count: 1, totalCount: 11 });
        expect(metaChanged).toMatchObject({ totalCountIsEstimate: true, count: 1 });
        expect(queryChanged).toMatchObject({ self: "/things?limit=2&page=3", previous: "/things?limit=2&page=2" });
        expect(paginated()).toBe(5);
    });

    it("leaves errors and answers core-api's Ext does not paginate as they are, and keeps nothing of them", async () => {
        const { server, memo, paginated, answer } = await serverWith(8);
        answer(Boom.badRequest("no such thing"));

        const failed = await get(server, "/api/things?limit=2");
        const plain = await get(server, "/api/plain");
        await get(server, "/api/plain");
        answer({ results: "not a list", totalCount: 1 });
        const odd = await get(server, "/api/things");

        expect(failed.status).toBe(400);
        expect(JSON.parse(failed.body).message).toBe("no such thing");
        expect(JSON.parse(plain.body)).toEqual({ results: [1], totalCount: 1 });
        expect(odd.status).toBe(500); // core-api's Ext asserts its results are an array, as it does alone
        expect(memo.size).toBe(0);
        expect(paginated()).toBe(3); // Hapi takes a handler's error past onPostHandler
    });

    it("keeps at most its capacity, the oldest going first", async () => {
        const { server, memo, paginated, answer } = await serverWith(2);
        answer(listingOf(1, 3));

        for (const page of [1, 2, 3]) {
            await get(server, `/api/things?limit=1&page=${page}`);
        }
        await get(server, "/api/things?limit=1&page=3");
        await get(server, "/api/things?limit=1&page=1");

        expect(memo.size).toBe(2);
        expect(paginated()).toBe(4); // pages 1-3 written, page 3 kept, page 1 dropped and written again
    });

    it("writes the envelope of a listing asked with a long query every time, and keeps nothing of it", async () => {
        const { server, memo, paginated, answer } = await serverWith(8);
        answer(listingOf(1, 3));
        const long = `/api/things?limit=1&username=${"x".repeat(MAX_KEPT_QUERY_CHARS)}`;

        const first = await get(server, long);
        const second = await get(server, long);

        expect(second).toEqual(first);
        expect(JSON.parse(first.body).meta.self).toBe(
            `/things?limit=1&username=${"x".repeat(MAX_KEPT_QUERY_CHARS)}&page=1`,
        );
        expect(memo.size).toBe(0);
        expect(paginated()).toBe(2);
    });
});
