import { pageMeta } from "../../../src/http/pagination";

describe("the pagination envelope", () => {
    it("links every page of a middle page", () => {
        expect(pageMeta({ path: "/api/v2/webhooks", page: 2, limit: 10 }, 10, 35)).toEqual({
            count: 10,
            pageCount: 4,
            totalCount: 35,
            next: "/api/v2/webhooks?page=3&limit=10",
            previous: "/api/v2/webhooks?page=1&limit=10",
            self: "/api/v2/webhooks?page=2&limit=10",
            first: "/api/v2/webhooks?page=1&limit=10",
            last: "/api/v2/webhooks?page=4&limit=10",
        });
    });

    it("has one page and no neighbours when empty", () => {
        const meta = pageMeta({ path: "/api/webhooks", page: 1, limit: 100 }, 0, 0);

        expect(meta).toMatchObject({ pageCount: 1, totalCount: 0, next: null, previous: null });
        expect(meta.last).toBe("/api/webhooks?page=1&limit=100");
    });

    it("links back from just past the last page, like core-api, and not from further", () => {
        expect(pageMeta({ path: "/api/webhooks", page: 5, limit: 10 }, 0, 35).previous).toBe(
            "/api/webhooks?page=4&limit=10",
        );
        expect(pageMeta({ path: "/api/webhooks", page: 9, limit: 10 }, 0, 35).previous).toBeNull();
    });
});
