import { AttemptResult, decideAfterAttempt, parseRetryAfter, retryDelayMs } from "../../../src/delivery/retry-policy";

const SCHEDULE = [5, 300, 1800];
const NOW = 1_000_000;
const decide = (result: AttemptResult, attemptNumber = 1, random = 0.5) =>
    decideAfterAttempt(result, { attemptNumber, scheduleSeconds: SCHEDULE, now: NOW, random });
const response = (statusCode: number, retryAfterMs?: number): AttemptResult => ({
    kind: "response",
    statusCode,
    retryAfterMs,
});

describe("what follows an attempt", () => {
    it.each([200, 201, 204, 299])("a %i is delivered", (status) => {
        expect(decide(response(status))).toEqual({ status: "delivered", nextAttemptAt: null, disableWebhook: false });
    });

    it.each([500, 502, 503, 408, 429])("retries a %i after the scheduled delay", (status) => {
        expect(decide(response(status))).toEqual({
            status: "pending",
            nextAttemptAt: NOW + 5000,
            disableWebhook: false,
        });
    });

    it("retries a network error on the schedule of its attempt number", () => {
        expect(decide({ kind: "network-error", message: "ECONNREFUSED" }, 2).nextAttemptAt).toBe(NOW + 300_000);
    });

    it.each([400, 401, 403, 404, 422, 301])("fails a %i at once", (status) => {
        expect(decide(response(status))).toEqual({ status: "failed", nextAttemptAt: null, disableWebhook: false });
    });

    it("fails a 410 and disables the webhook", () => {
        expect(decide(response(410))).toEqual({ status: "failed", nextAttemptAt: null, disableWebhook: true });
    });

    it("fails a target refused by the policy without retrying", () => {
        expect(decide({ kind: "refused", message: "169.254.169.254 is in delivery.denyTargets" }).status).toBe(
            "failed",
        );
    });

    it("is dead after the last scheduled retry", () => {
        expect(decide(response(503), SCHEDULE.length + 1)).toEqual({
            status: "dead",
            nextAttemptAt: null,
            disableWebhook: false,
        });
        expect(decide(response(503), SCHEDULE.length).status).toBe("pending");
    });

    it("honours a Retry-After longer than the schedule, not a shorter one", () => {
        expect(decide(response(429, 60_000)).nextAttemptAt).toBe(NOW + 60_000);
        expect(decide(response(429, 1000)).nextAttemptAt).toBe(NOW + 5000);
    });

    it("spreads retries by ±10 % jitter", () => {
        expect(retryDelayMs(SCHEDULE, 2, 0)).toBe(270_000);
        expect(retryDelayMs(SCHEDULE, 2, 0.5)).toBe(300_000);
        expect(retryDelayMs(SCHEDULE, 2, 0.999999)).toBe(330_000);
    });
});

describe("Retry-After", () => {
    it.each<[string | undefined, number | undefined]>([
        ["120", 120_000],
        ["0", 0],
        [new Date(NOW + 30_000).toUTCString(), 30_000],
        [new Date(NOW - 30_000).toUTCString(), 0],
        ["999999999", 24 * 60 * 60 * 1000],
        ["soon", undefined],
        ["", undefined],
        [undefined, undefined],
    ])("reads %p", (header, expected) => {
        const exact = header && /GMT/.test(header) ? Math.round(NOW / 1000) * 1000 : NOW;
        expect(parseRetryAfter(header, exact)).toBe(expected);
    });
});
