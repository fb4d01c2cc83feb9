import { PingLimiter, PingLimitError } from "../../../src/webhooks/ping-limiter";

describe("the pings a webhook may have", () => {
    it("allows its share in any 60 s, then refuses until the oldest leaves the window, saying when", () => {
        const limiter = new PingLimiter(3);
        [0, 10_000, 20_000].forEach((now) => limiter.take("a", now));

        expect(() => limiter.take("a", 30_000)).toThrow(PingLimitError);
        try {
            limiter.take("a", 30_000);
        } catch (error) {
            expect((error as PingLimitError).retryAfterSeconds).toBe(30);
        }
        expect(() => limiter.take("a", 59_999)).toThrow(/try again in 1 s/);
        expect(() => limiter.take("a", 60_000)).not.toThrow();
    });

    it("keeps each webhook's count apart, and refused pings count for nothing", () => {
        const limiter = new PingLimiter(1);
        limiter.take("a", 0);
        expect(() => limiter.take("a", 1)).toThrow(PingLimitError);
        expect(() => limiter.take("b", 1)).not.toThrow();
        expect(() => limiter.take("a", 60_000)).not.toThrow();
    });

    it("forgets webhooks with no ping in the window once it remembers many", () => {
        const limiter = new PingLimiter(1);
        for (let index = 0; index <= 10_000; index++) {
            limiter.take(`webhook-${index}`, 0);
        }
        limiter.take("late", 60_000);
        expect(() => limiter.take("webhook-0", 60_001)).not.toThrow();
        expect(limiter.webhooksCounted).toBe(2);
    });
});
