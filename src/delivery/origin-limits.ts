import { OriginLoad } from "../contracts";
import { AttemptResult } from "./retry-policy";

export interface OriginLimitOptions {
    /** Attempts under way to one origin at the start, and never fewer than `floor`. */
    floor: number;
    /** Never more than this to one origin. */
    ceiling: number;
}

interface Origin {
    limit: number;
    inFlight: number;
    /** Doubling each round trip until the first sign of strain, as TCP's slow start. */
    slowStart: boolean;
    /** Successes left in this round (a round: as many attempts as the limit at its start). */
    roundLeft: number;
    /** The limit was reached in this round: it held the origin back, so it may grow. */
    saturated: boolean;
    /** Smoothed latency of 2xx answers, shown in the API and the metrics. */
    latency: number | null;
    /** This round's quickest 2xx answer: what the receiver takes when nothing queues in front of it. */
    roundQuickest: number | null;
    /** The quickest answer of the rounds before, creeping up each round (BASELINE_DRIFT). */
    baseline: number | null;
    pausedUntil: number;
    lastDecrease: number;
    /** When an attempt to it last started or ended. */
    lastUsed: number;
}

const START = 4;
// An origin back at its starting limit is forgotten after this long without attempts: until then
// its figures stay in the API and the metrics, where a scrape every few seconds can see them.
const FORGET_AFTER_MS = 10 * 60_000;
/**
 * The longest a Retry-After pauses a whole origin: one tenant of a shared receiver host asking for a
 * day would stop every other webhook on it. A longer delay still holds that delivery (retry-policy.ts).
 */
export const ORIGIN_PAUSE_CAP_MS = 5 * 60_000;
// Latency this many times the baseline (and 5 ms above it) means the receiver queues: the limit
// stops growing, and further up it shrinks.
const HOLD_RATIO = 1.5;
const SHRINK_RATIO = 2.5;
const STRAIN_MARGIN_MS = 5;
const DECREASE = 0.5;
const GENTLE_DECREASE = 0.9;
// The smoothed latency follows each attempt by this share; the baseline creeps up by this factor
// each round, so that a receiver that became slower for good is re-measured.
const LATENCY_WEIGHT = 0.2;
const BASELINE_DRIFT = 1.02;

const isOverload = (result: AttemptResult): boolean =>
    result.kind === "network-error" ||
    (result.kind === "response" &&
        (result.statusCode === 429 || result.statusCode === 503 || result.statusCode === 408));

/** Latency well above the baseline: by the ratio, and by more than the margin (whole milliseconds near 0). */
const exceeds = (latency: number, baseline: number | null, ratio: number): boolean =>
    baseline !== null && latency > baseline * ratio && latency - baseline > STRAIN_MARGIN_MS;

/**
 * How many attempts each receiver's origin may have under way: additive increase, multiplicative
 * decrease (AIMD, TCP's congestion control), per origin. A new origin starts at 4 and doubles each
 * round trip while it answers 2xx without its latency rising; then the limit grows by one a round.
 * Whether latency rose is judged once a round, on the round's quickest answer against the quickest
 * of the rounds before (as TCP's HyStart judges round-trip times): a receiver that queues slows
 * every answer, while one slow answer (a new connection's handshake, code not yet compiled) leaves
 * the quickest as it was. A slow answer only adds nothing to the limit while slow start doubles it.
 * Timeouts, connection errors, 408, 429 and 503 halve it (once a round trip: a burst of failures
 * from one overload is one signal); latency well above the origin's baseline shrinks it gently. A
 * `Retry-After` on 429 or 503 pauses the whole origin until then. No package was found for this in
 * Node.js (the maintained adaptive limiters are Netflix's Java library and its Rust and Go ports).
 */
export class OriginLimits {
    private readonly origins = new Map<string, Origin>();

    public constructor(
        private readonly options: OriginLimitOptions,
        private readonly clock: () => number = Date.now,
    ) {}

    /** Attempts the origin may start now. */
    public free(origin: string): number {
        const state = this.origins.get(origin);
        if (!state) {
            return this.initial();
        }
        if (state.pausedUntil > this.clock()) {
            return 0;
        }
        return Math.max(0, Math.floor(state.limit) - state.inFlight);
    }

    /** When a Retry-After pause of the origin ends, if it is paused. */
    public pausedUntil(origin: string): number {
        const until = this.origins.get(origin)?.pausedUntil ?? 0;
        return until > this.clock() ? until : 0;
    }

    public started(origin: string): void {
        const state = this.stateOf(origin);
        state.inFlight++;
        state.lastUsed = this.clock();
        if (state.inFlight >= Math.floor(state.limit)) {
            state.saturated = true;
        }
    }

    /** An attempt ended; `result` is undefined when it failed inside the plugin (no signal). */
    public finished(origin: string, result: AttemptResult | undefined, durationMs: number): void {
        const state = this.stateOf(origin);
        state.inFlight = Math.max(0, state.inFlight - 1);
        state.lastUsed = this.clock();
        if (result === undefined) {
            return;
        }
        const now = this.clock();
        if (result.kind === "response" && result.retryAfterMs !== undefined && isOverload(result)) {
            state.pausedUntil = Math.max(state.pausedUntil, now + Math.min(result.retryAfterMs, ORIGIN_PAUSE_CAP_MS));
        }
        if (isOverload(result)) {
            this.decrease(state, DECREASE, now);
            return;
        }
        if (result.kind !== "response" || result.statusCode < 200 || result.statusCode >= 300) {
            return; // the receiver answered, but not 2xx: says nothing of its capacity
        }
        state.latency =
            state.latency === null ? durationMs : state.latency + (durationMs - state.latency) * LATENCY_WEIGHT;
        state.roundQuickest = Math.min(state.roundQuickest ?? durationMs, durationMs);
        // Grows only when the limit was what held it back: an idle origin's limit stays.
        if (state.saturated && state.slowStart && !exceeds(durationMs, state.baseline, HOLD_RATIO)) {
            // One more for each quick success: the limit doubles in a round.
            state.limit = Math.min(this.options.ceiling, state.limit + 1);
        }
        state.roundLeft--;
        if (state.roundLeft <= 0) {
            this.endRound(state, now);
        }
    }

    /** Judges the round that ended by its quickest answer, and starts the next. */
    private endRound(state: Origin, now: number): void {
        const quickest = state.roundQuickest ?? 0;
        const before = state.baseline;
        state.baseline = before === null ? quickest : Math.min(before * BASELINE_DRIFT, quickest);
        if (exceeds(quickest, before, SHRINK_RATIO)) {
            this.decrease(state, GENTLE_DECREASE, now);
        } else if (exceeds(quickest, before, HOLD_RATIO)) {
            state.slowStart = false;
        } else if (state.saturated && !state.slowStart) {
            state.limit = Math.min(this.options.ceiling, state.limit + 1);
        }
        state.saturated = state.inFlight >= Math.floor(state.limit);
        state.roundLeft = Math.floor(state.limit);
        state.roundQuickest = null;
    }

    public inFlight(origin: string): number {
        return this.origins.get(origin)?.inFlight ?? 0;
    }

    public loads(): OriginLoad[] {
        const now = this.clock();
        return [...this.origins].map(([origin, state]) => ({
            origin,
            concurrency: Math.floor(state.limit),
            inFlight: state.inFlight,
            latencyMs: state.latency === null ? null : Math.round(state.latency * 10) / 10,
            baselineLatencyMs: state.baseline === null ? null : Math.round(state.baseline * 10) / 10,
            pausedUntil: state.pausedUntil > now ? state.pausedUntil : null,
        }));
    }

    /** The earliest end of an origin's pause after `now`, or `fallback` if none ends sooner (no copies made: asked each pass). */
    public nextPauseEnd(now: number, fallback: number): number {
        let next = fallback;
        for (const state of this.origins.values()) {
            if (state.pausedUntil > now && state.pausedUntil < next) {
                next = state.pausedUntil;
            }
        }
        return next;
    }

    /**
     * Forgets origins idle for FORGET_AFTER_MS, whatever limit they had learned: what a receiver
     * sustained ten minutes ago says little of it now, and the API and the metrics would otherwise
     * keep every origin ever seen (a thousand failing receivers, two thousand series for good).
     */
    public forgetIdle(): void {
        for (const [origin, state] of this.origins) {
            if (
                state.inFlight === 0 &&
                state.pausedUntil <= this.clock() &&
                this.clock() - state.lastUsed >= FORGET_AFTER_MS
            ) {
                this.origins.delete(origin);
            }
        }
    }

    private initial(): number {
        return Math.min(this.options.ceiling, Math.max(this.options.floor, START));
    }

    private stateOf(origin: string): Origin {
        let state = this.origins.get(origin);
        if (!state) {
            state = {
                limit: this.initial(),
                inFlight: 0,
                slowStart: true,
                roundLeft: this.initial(),
                saturated: false,
                latency: null,
                roundQuickest: null,
                baseline: null,
                pausedUntil: 0,
                lastDecrease: Number.NEGATIVE_INFINITY,
                lastUsed: this.clock(),
            };
            this.origins.set(origin, state);
        }
        return state;
    }

    private decrease(state: Origin, factor: number, now: number): void {
        state.slowStart = false;
        // Once per round trip: the failures of one overload arrive together.
        const roundTrip = Math.max(state.latency ?? 0, 100);
        if (now - state.lastDecrease < roundTrip) {
            return;
        }
        state.lastDecrease = now;
        state.limit = Math.max(this.options.floor, state.limit * factor);
    }
}
