import { ORIGIN_PAUSE_CAP_MS, OriginLimits } from "../../../src/delivery/origin-limits";
import { AttemptResult } from "../../../src/delivery/retry-policy";

const ORIGIN = "http://receiver.test";
const ok: AttemptResult = { kind: "response", statusCode: 200 };

/** Fills the origin to its limit and ends every attempt with `result` after `durationMs`. */
const round = (limits: OriginLimits, clock: { now: number }, result: AttemptResult, durationMs: number): number => {
    const started = limits.free(ORIGIN);
    for (let index = 0; index < started; index++) {
        limits.started(ORIGIN);
    }
    clock.now += durationMs;
    for (let index = 0; index < started; index++) {
        limits.finished(ORIGIN, result, durationMs);
    }
    return started;
};

/** Fills the origin to its limit and ends the attempts with 200 after the durations given, in turn. */
const mixedRound = (limits: OriginLimits, clock: { now: number }, durationsMs: (index: number) => number): number => {
    const started = limits.free(ORIGIN);
    for (let index = 0; index < started; index++) {
        limits.started(ORIGIN);
    }
    for (let index = 0; index < started; index++) {
        clock.now += 1;
        limits.finished(ORIGIN, ok, durationsMs(index));
    }
    return started;
};

describe("OriginLimits", () => {
    it("raises a slow but healthy receiver's concurrency up to the ceiling, doubling while nothing strains", () => {
        const clock = { now: 0 };
        const limits = new OriginLimits({ floor: 1, ceiling: 64 }, () => clock.now);
        const perRound = Array.from({ length: 6 }, () => round(limits, clock, ok, 250));
        expect(perRound).toEqual([4, 8, 16, 32, 64, 64]);
        expect(limits.loads()).toEqual([
            {
                origin: ORIGIN,
                concurrency: 64,
                inFlight: 0,
                latencyMs: 250,
                baselineLatencyMs: expect.any(Number),
                pausedUntil: null,
            },
        ]);
    });

    it("keeps raising a new origin's limit while some answers are slow but the quickest stay quick (new connections, code warming up)", () => {
        const clock = { now: 0 };
        const limits = new OriginLimits({ floor: 1, ceiling: 64 }, () => clock.now);
        // Each round, the answers on new connections (half: the limit doubles) take 10 times longer.
        const perRound = Array.from({ length: 8 }, () =>
            mixedRound(limits, clock, (index) => (index % 2 === 0 ? 30 : 3)),
        );
        expect(perRound).toEqual([4, 8, 12, 18, 27, 40, 60, 64]);
    });

    it("does not shrink a quick receiver's limit for a few slow answers among quick ones (latency in whole milliseconds)", () => {
        const clock = { now: 0 };
        const limits = new OriginLimits({ floor: 1, ceiling: 64 }, () => clock.now);
        for (let index = 0; index < 5; index++) {
            mixedRound(limits, clock, () => 0);
        }
        expect(limits.free(ORIGIN)).toBe(64);
        // The receiver pauses now and then (its collector): the last answers of each round wait 12 ms.
        for (let index = 0; index < 10; index++) {
            mixedRound(limits, clock, (attempt) => (attempt >= 52 ? 12 : attempt % 3));
        }
        expect(limits.free(ORIGIN)).toBe(64);
    });

    it("halves it on timeouts and connection errors, once a round trip, down to the floor", () => {
        const clock = { now: 0 };
        const limits = new OriginLimits({ floor: 2, ceiling: 64 }, () => clock.now);
        for (let index = 0; index < 4; index++) {
            round(limits, clock, ok, 20);
        }
        expect(limits.free(ORIGIN)).toBe(64);
        round(limits, clock, { kind: "network-error", message: "timeout" }, 1_000);
        expect(limits.free(ORIGIN)).toBe(32); // 64 failures of one overload are one signal
        for (let index = 0; index < 8; index++) {
            round(limits, clock, { kind: "network-error", message: "ECONNRESET" }, 1_000);
        }
        expect(limits.free(ORIGIN)).toBe(2);
    });

    it("pauses the whole origin for as long as a 429's Retry-After asks", () => {
        const clock = { now: 1_000 };
        const limits = new OriginLimits({ floor: 1, ceiling: 64 }, () => clock.now);
        limits.started(ORIGIN);
        limits.finished(ORIGIN, { kind: "response", statusCode: 429, retryAfterMs: 30_000 }, 5);
        expect(limits.free(ORIGIN)).toBe(0);
        expect(limits.pausedUntil(ORIGIN)).toBe(31_000);
        expect(limits.loads()[0].pausedUntil).toBe(31_000);
        // What the dispatcher sleeps until: the pause's end when it comes first, else its own time.
        expect(limits.nextPauseEnd(clock.now, 60_000)).toBe(31_000);
        expect(limits.nextPauseEnd(clock.now, 20_000)).toBe(20_000);
        clock.now = 31_000;
        expect(limits.nextPauseEnd(clock.now, 60_000)).toBe(60_000);
        expect(limits.free(ORIGIN)).toBe(2);
        expect(limits.pausedUntil(ORIGIN)).toBe(0);
    });

    it("pauses the whole origin no longer than its cap, however long one answer's Retry-After", () => {
        const clock = { now: 1_000 };
        const limits = new OriginLimits({ floor: 1, ceiling: 64 }, () => clock.now);
        limits.started(ORIGIN);
        limits.finished(ORIGIN, { kind: "response", statusCode: 503, retryAfterMs: 99_999_999_000 }, 5);
        expect(limits.pausedUntil(ORIGIN)).toBe(1_000 + ORIGIN_PAUSE_CAP_MS);
        expect(ORIGIN_PAUSE_CAP_MS).toBe(5 * 60_000);
        clock.now += ORIGIN_PAUSE_CAP_MS;
        expect(limits.free(ORIGIN)).toBeGreaterThan(0);
    });

    it("stops growing, then shrinks, when the receiver's latency rises with the load", () => {
        const clock = { now: 0 };
        const limits = new OriginLimits({ floor: 1, ceiling: 64 }, () => clock.now);
        round(limits, clock, ok, 10);
        round(limits, clock, ok, 10);
        const reached = limits.free(ORIGIN);
        for (let index = 0; index < 5; index++) {
            round(limits, clock, ok, 200);
        }
        expect(limits.free(ORIGIN)).toBeLessThan(reached);
    });

    it("leaves an origin that never uses its limit where it is, and says nothing of 4xx", () => {
        const clock = { now: 0 };
        const limits = new OriginLimits({ floor: 1, ceiling: 64 }, () => clock.now);
        for (let index = 0; index < 50; index++) {
            limits.started(ORIGIN);
            clock.now += 10;
            limits.finished(ORIGIN, index % 2 ? ok : { kind: "response", statusCode: 404 }, 10);
        }
        expect(limits.free(ORIGIN)).toBe(4);
        // Shown for a while after its last attempt, for the API and the metrics; then forgotten.
        clock.now += 60_000;
        limits.forgetIdle();
        expect(limits.loads()).toHaveLength(1);
        clock.now += 10 * 60_000;
        limits.forgetIdle();
        expect(limits.loads()).toEqual([]);
    });

    it("forgets an origin idle for ten minutes whatever limit it learned, halved by failures or grown under load", () => {
        const clock = { now: 0 };
        const limits = new OriginLimits({ floor: 1, ceiling: 64 }, () => clock.now);
        const failing = "http://failing.test";
        const busy = "http://busy.test";
        limits.started(failing);
        clock.now += 10;
        limits.finished(failing, { kind: "response", statusCode: 503 }, 10);
        for (let index = 0; index < 6; index++) {
            round(limits, clock, ok, 20);
        }
        limits.started(busy);
        clock.now += 10;
        limits.finished(busy, ok, 10);
        const learned = limits.loads().map(({ origin, concurrency }) => [origin, concurrency]);
        expect(learned).toEqual(
            expect.arrayContaining([
                [failing, expect.any(Number)],
                [ORIGIN, expect.any(Number)],
            ]),
        );
        expect(limits.free(failing)).toBeLessThan(4);
        expect(limits.free(ORIGIN)).toBeGreaterThan(4);

        clock.now += 10 * 60_000 - 20;
        limits.forgetIdle();
        expect(limits.loads().map(({ origin }) => origin)).toEqual([ORIGIN, busy]);
        clock.now += 20;
        limits.forgetIdle();
        expect(limits.loads()).toEqual([]);
        expect(limits.free(failing)).toBe(4);
    });
});
