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

/** How a simulated receiver answers an attempt started at `now` with `inFlight` under way (itself included). */
type Receiver = (now: number, inFlight: number) => { durationMs: number; result: AttemptResult };

/** Deterministic jitter: each answer time within ±10 % of its mean, as a real receiver's varies. */
let seed = 1;
const jittered = (meanMs: number): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return meanMs * (0.9 + (0.2 * seed) / 2_147_483_648);
};

const flat =
    (durationMs: number): Receiver =>
    () => ({ durationMs: jittered(durationMs), result: ok });

/** A receiver with `count` workers taking `serviceMs` each, and a queue in front of them. */
const workers = (count: number, serviceMs: number): Receiver => {
    const freeAt = Array.from({ length: count }, () => 0);
    return (now) => {
        const worker = freeAt.indexOf(Math.min(...freeAt));
        const end = Math.max(now, freeAt[worker]) + jittered(serviceMs);
        freeAt[worker] = end;
        return { durationMs: end - now, result: ok };
    };
};

/**
 * A dispatcher with more due deliveries than any limit, on a fake clock: it starts as many
 * attempts as the origin allows, each ends when the receiver says, and the limit is sampled every
 * 10 ms. Returns the samples from `from` to `to`.
 */
class Simulation {
    public now = 0;
    private readonly ends: Array<{ at: number; durationMs: number; result: AttemptResult }> = [];
    public readonly limits = new OriginLimits({ floor: 1, ceiling: 64 }, () => this.now);
    public readonly samples: Array<{ at: number; limit: number }> = [];

    public run(receiver: Receiver, durationMs: number): void {
        const until = this.now + durationMs;
        let nextSample = this.now;
        while (this.now < until) {
            for (let free = this.limits.free(ORIGIN); free > 0; free--) {
                this.limits.started(ORIGIN);
                const answer = receiver(this.now, this.limits.inFlight(ORIGIN));
                this.ends.push({ at: this.now + answer.durationMs, ...answer });
            }
            this.ends.sort((left, right) => left.at - right.at);
            const next = Math.min(this.ends[0]?.at ?? until, until, nextSample);
            this.now = Math.max(this.now, next);
            if (this.now >= nextSample) {
                this.samples.push({ at: this.now, limit: this.limit });
                nextSample += 10;
            }
            while (this.ends.length > 0 && this.ends[0].at <= this.now) {
                const ended = this.ends.shift();
                if (ended) {
                    this.limits.finished(ORIGIN, ended.result, ended.durationMs);
                }
            }
        }
    }

    /** The limit now. */
    public get limit(): number {
        return this.limits.loads().find(({ origin }) => origin === ORIGIN)?.concurrency ?? 0;
    }

    /** How long after `from` the limit first reached `at least`, or undefined. */
    public reached(atLeast: number, from: number): number | undefined {
        const sample = this.samples.find(({ at, limit }) => at >= from && limit >= atLeast);
        return sample === undefined ? undefined : sample.at - from;
    }

    public between(from: number, to: number): number[] {
        return this.samples.filter(({ at }) => at >= from && at < to).map(({ limit }) => limit);
    }
}

describe("OriginLimits", () => {
    it("raises a slow but healthy receiver's concurrency up to the ceiling, doubling while its rate doubles", () => {
        const clock = { now: 0 };
        const limits = new OriginLimits({ floor: 1, ceiling: 64 }, () => clock.now);
        const perRound = Array.from({ length: 10 }, () => round(limits, clock, ok, 250));
        // Each new limit's first round settles (answers of the old limit's attempts come in it).
        expect(perRound).toEqual([4, 8, 8, 16, 16, 32, 32, 64, 64, 64]);
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

    describe("re-learns a receiver that changes pace within 5 s", () => {
        it("1 ms, then 250 ms for good: the limit climbs to the ceiling", () => {
            const simulation = new Simulation();
            simulation.run(flat(1), 10_000);
            const changed = simulation.now;
            simulation.run(flat(250), 10_000);

            expect(simulation.reached(64, changed)).toBeLessThanOrEqual(5_000);
            expect(Math.min(...simulation.between(changed + 5_000, changed + 10_000))).toBeGreaterThanOrEqual(51);
        });

        it("250 ms, then 1 ms: the limit it learned is not lost", () => {
            const simulation = new Simulation();
            simulation.run(flat(250), 10_000);
            expect(simulation.reached(64, 0)).toBeLessThanOrEqual(2_000);
            const changed = simulation.now;
            simulation.run(flat(1), 10_000);

            expect(Math.min(...simulation.between(changed, changed + 10_000))).toBeGreaterThanOrEqual(51);
        });

        it("after a spell of timeouts, a receiver that answers in 250 ms gets the ceiling", () => {
            const simulation = new Simulation();
            simulation.run(flat(1), 2_000);
            simulation.run(
                () => ({ durationMs: 1_500, result: { kind: "network-error", message: "timeout" } }),
                20_000,
            );
            expect(simulation.limit).toBe(1);
            const recovered = simulation.now;
            simulation.run(flat(250), 10_000);

            expect(simulation.reached(64, recovered)).toBeLessThanOrEqual(5_000);
        });

        it("after a spell of 503s, the same", () => {
            const simulation = new Simulation();
            simulation.run(flat(5), 2_000);
            simulation.run(() => ({ durationMs: 2, result: { kind: "response", statusCode: 503 } }), 10_000);
            expect(simulation.limit).toBe(1);
            const recovered = simulation.now;
            simulation.run(flat(250), 10_000);

            expect(simulation.reached(64, recovered)).toBeLessThanOrEqual(5_000);
        });
    });

    it("cuts the limit of a receiver whose answer time grows with the attempts under way, and keeps it cut", () => {
        const simulation = new Simulation();
        // One worker of 40 ms: 25 answers a second whatever the limit, 40 ms more for each attempt queued.
        simulation.run(workers(1, 40), 60_000);

        expect(Math.max(...simulation.between(10_000, 60_000))).toBeLessThanOrEqual(5);
        expect(simulation.limit).toBeLessThanOrEqual(2);
    });

    it("settles at a receiver's knee (8 workers of 50 ms) and stays there", () => {
        const simulation = new Simulation();
        simulation.run(workers(8, 50), 60_000);
        const settled = simulation.between(10_000, 60_000);
        // Probes aside (a round or two at 6 or 10 now and then), it holds 8.
        const share = (test: (limit: number) => boolean): number => settled.filter(test).length / settled.length;

        expect([...settled].sort((left, right) => left - right)[Math.floor(settled.length / 2)]).toBe(8);
        expect(share((limit) => limit >= 6 && limit <= 12)).toBeGreaterThanOrEqual(0.9);
    });

    it("does not flap under a steady receiver: the ceiling held, probes aside, most of the time", () => {
        const simulation = new Simulation();
        simulation.run(flat(250), 60_000);
        const settled = simulation.between(5_000, 60_000);

        expect(settled.filter((limit) => limit === 64).length / settled.length).toBeGreaterThanOrEqual(0.85);
        expect(Math.min(...settled)).toBeGreaterThanOrEqual(51);
    });

    it("halves it on timeouts and connection errors, once a round trip, down to the floor", () => {
        const clock = { now: 0 };
        const limits = new OriginLimits({ floor: 2, ceiling: 64 }, () => clock.now);
        for (let index = 0; index < 9; index++) {
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
