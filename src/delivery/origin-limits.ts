import { OriginLoad } from "../contracts";
import { PauseKeeper } from "../store/origin-pauses";
import { AttemptResult } from "./retry-policy";

export interface OriginLimitOptions {
    /** Attempts under way to one origin at the start, and never fewer than `floor`. */
    floor: number;
    /** Never more than this to one origin. */
    ceiling: number;
}

/** What one round measured: the completions, and how full the origin was while they came. */
interface Round {
    startedAt: number;
    /** The limit when it started: the round ends after as many completions (and MIN_ROUND_MS). */
    limit: number;
    size: number;
    /**
     * The first round after the limit changed: the answers of attempts started under the old limit
     * still come in it, so it is not judged; the round after it is.
     */
    settling: boolean;
    completions: number;
    /** The most attempts under way at one start, and their sum at each completion (for the mean). */
    peakInFlight: number;
    inFlightAtCompletions: number;
    quickest: number | null;
}

/** A limit tried for one round; kept if the round's rate says it is better. */
interface Probe {
    from: number;
    direction: "up" | "down";
}

interface Origin {
    limit: number;
    inFlight: number;
    round: Round;
    probe: Probe | undefined;
    /** Answers a second at the limit now, measured in the last round at it; null until measured. */
    reference: number | null;
    /** Which way the next probe goes, and by what factor. */
    direction: "up" | "down";
    step: number;
    /** Rounds to wait before the next probe: lengthened by each probe that found nothing better. */
    quiet: number;
    quietAfterRejection: number;
    /** Smoothed latency of 2xx answers, and the quickest of the last round: shown in the API and the metrics. */
    latency: number | null;
    quickest: number | null;
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
// A round lasts at least this long, so that its rate is measured over more than the clock's tick.
const MIN_ROUND_MS = 20;
// A probe up is kept when the rate rose by this share; a probe down when it fell by less than this.
const GAIN_TO_GROW = 0.15;
const LOSS_TO_SHRINK = 0.05;
// Probe steps: the first after a start doubles (slow start), later ones are gentler, and each probe
// kept makes the next one in the same direction bolder, so that a new pace is reached in a few rounds.
const SLOW_START_STEP = 2;
const UP_STEP = 1.25;
const DOWN_STEP = 0.8;
const BOLDER = 1.5;
const MAX_QUIET_ROUNDS = 16;
// A round counts only if the limit held the origin back: reached at a start, and on average at
// least this share of it under way as answers came.
const SATURATED_SHARE = 0.5;
const DECREASE = 0.5;
const LATENCY_WEIGHT = 0.2;

const isOverload = (result: AttemptResult): boolean =>
    result.kind === "network-error" ||
    (result.kind === "response" &&
        (result.statusCode === 429 || result.statusCode === 503 || result.statusCode === 408));

/**
 * A round of as many answers as the limit; a settling round lasts until the attempts already under
 * way have been answered too (answers come about in the order attempts started).
 */
const newRound = (now: number, limit: number, settling: boolean, inFlight: number): Round => ({
    startedAt: now,
    limit,
    size: Math.max(1, Math.floor(limit), settling ? inFlight : 0),
    settling,
    completions: 0,
    peakInFlight: 0,
    inFlightAtCompletions: 0,
    quickest: null,
});

/**
 * How many attempts each receiver's origin may have under way, learned from what it delivers, not
 * from its latency alone (Little's law: answers a second = attempts under way / answer time). Each
 * round of answers (as many as the limit) measures the rate at the current limit; now and then a
 * round tries another limit, and keeps it if the rate says so: a limit raised by a quarter is kept
 * when the rate rose by 15 % (a receiver whose answer time is flat as attempts grow), a limit
 * lowered by a fifth is kept when the rate fell by less than a twentieth (a receiver that queues:
 * its answer time grows with the attempts under way, so fewer deliver as much, sooner). A probe
 * kept makes the next one in its direction bolder; one that found nothing better makes the next
 * wait longer (up to 8 rounds), so a steady receiver's limit stays put. Comparing each probe with
 * the round just before, not with what was seen long ago, is what lets a receiver that changed
 * pace (250 ms after 1 ms, or after a spell of timeouts) be learned again in a few rounds: the
 * windowed minimum of BBR, and the long-average latency of Netflix's Gradient2, both remember the
 * old pace for their whole window. A new origin starts at 4 and doubles each round while its rate
 * doubles (slow start). Timeouts, connection errors, 408, 429 and 503 halve the limit (once a round
 * trip: the failures of one overload are one signal) and start probing up again from there. A
 * `Retry-After` on 429 or 503 pauses the whole origin until then. No package was found for this in
 * Node.js (the maintained adaptive limiters are Netflix's Java library and its Rust and Go ports).
 */
export class OriginLimits {
    private readonly origins = new Map<string, Origin>();

    public constructor(
        private readonly options: OriginLimitOptions,
        private readonly clock: () => number = Date.now,
        /** Keeps each pause where a restart finds it again. */
        private readonly pauses?: PauseKeeper,
    ) {}

    /** A pause kept from before a restart. */
    public restorePause(origin: string, until: number): void {
        if (until > this.clock()) {
            this.stateOf(origin).pausedUntil = until;
        }
    }

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
        state.round.peakInFlight = Math.max(state.round.peakInFlight, state.inFlight);
    }

    /** An attempt ended; `result` is undefined when it failed inside the plugin (no signal). */
    public finished(origin: string, result: AttemptResult | undefined, durationMs: number): void {
        const state = this.stateOf(origin);
        const inFlightBefore = state.inFlight;
        state.inFlight = Math.max(0, state.inFlight - 1);
        const now = this.clock();
        state.lastUsed = now;
        if (result === undefined) {
            return;
        }
        if (result.kind === "response" && result.retryAfterMs !== undefined && isOverload(result)) {
            const until = Math.max(state.pausedUntil, now + Math.min(result.retryAfterMs, ORIGIN_PAUSE_CAP_MS));
            if (until !== state.pausedUntil) {
                state.pausedUntil = until;
                this.keep(() => this.pauses?.kept(origin, until));
            }
        }
        if (isOverload(result)) {
            this.decrease(state, now);
            return;
        }
        if (result.kind === "response" && result.statusCode >= 200 && result.statusCode < 300) {
            state.latency =
                state.latency === null ? durationMs : state.latency + (durationMs - state.latency) * LATENCY_WEIGHT;
            state.round.quickest = Math.min(state.round.quickest ?? durationMs, durationMs);
        }
        // Any answer but an overload is the receiver's work done: it counts in the rate.
        const round = state.round;
        round.completions++;
        round.inFlightAtCompletions += inFlightBefore;
        if (round.completions >= round.size && now - round.startedAt >= MIN_ROUND_MS) {
            this.endRound(state, now);
        }
    }

    /** Judges the round that ended (and the probe it tried), and starts the next. */
    private endRound(state: Origin, now: number): void {
        const round = state.round;
        state.quickest = round.quickest ?? state.quickest;
        if (round.settling) {
            state.round = newRound(now, state.limit, false, state.inFlight);
            return;
        }
        const rate = (round.completions * 1000) / (now - round.startedAt);
        const saturated =
            round.peakInFlight >= round.size &&
            round.inFlightAtCompletions / round.completions >= round.size * SATURATED_SHARE;
        const probe = state.probe;
        state.probe = undefined;
        if (!saturated) {
            // Fewer attempts than the limit were wanted: the round says nothing of the limit.
            if (probe) {
                state.limit = probe.from;
            }
            state.reference = null;
        } else if (probe && state.reference !== null) {
            const kept =
                probe.direction === "up"
                    ? rate >= state.reference * (1 + GAIN_TO_GROW)
                    : rate >= state.reference * (1 - LOSS_TO_SHRINK);
            if (kept) {
                state.reference = rate;
                state.step = probe.direction === "up" ? Math.min(2, state.step * BOLDER) : state.step / BOLDER;
                state.quiet = 0;
                state.quietAfterRejection = 0;
                this.startProbe(state); // at once, bolder: a new pace is reached in a few rounds
            } else {
                state.limit = probe.from;
                state.reference = null;
                state.direction = probe.direction === "up" ? "down" : "up";
                state.step = state.direction === "up" ? UP_STEP : DOWN_STEP;
                state.quietAfterRejection = Math.min(MAX_QUIET_ROUNDS, Math.max(1, state.quietAfterRejection * 2));
                state.quiet = state.quietAfterRejection;
            }
        } else {
            state.reference = rate;
            if (state.quiet > 0) {
                state.quiet--;
            } else {
                this.startProbe(state);
            }
        }
        state.round = newRound(now, state.limit, state.limit !== round.limit, state.inFlight);
    }

    /** Tries another limit for the next round, in the direction due (the other where it is bounded). */
    private startProbe(state: Origin): void {
        const { floor, ceiling } = this.options;
        const target = (direction: "up" | "down", step: number): number =>
            direction === "up"
                ? Math.min(ceiling, Math.max(state.limit + 1, state.limit * step))
                : Math.max(floor, Math.min(state.limit - 1, state.limit * step));
        const to = target(state.direction, state.step);
        if (Math.floor(to) === Math.floor(state.limit)) {
            // At the ceiling (or the floor): the next probe, a while later, goes the other way.
            state.direction = state.direction === "up" ? "down" : "up";
            state.step = state.direction === "up" ? UP_STEP : DOWN_STEP;
            state.quiet = MAX_QUIET_ROUNDS / 2;
            return;
        }
        state.probe = { from: state.limit, direction: state.direction };
        state.limit = to;
    }

    /** An operator asked for a delivery to this origin now (a redelivery, a ping): its pause ends. */
    public resume(origin: string): void {
        const state = this.origins.get(origin);
        if (state && state.pausedUntil > 0) {
            state.pausedUntil = 0;
            this.keep(() => this.pauses?.ended(origin));
        }
    }

    /** A pause not kept only lasts until the restart: the attempt's outcome matters more than it. */
    private keep(write: () => void): void {
        try {
            write();
        } catch {
            // The file refuses writes; the storage's health says so through the outcomes' writes.
        }
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
            baselineLatencyMs: state.quickest === null ? null : Math.round(state.quickest * 10) / 10,
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
            const now = this.clock();
            state = {
                limit: this.initial(),
                inFlight: 0,
                round: newRound(now, this.initial(), false, 0),
                probe: undefined,
                reference: null,
                direction: "up",
                step: SLOW_START_STEP,
                quiet: 0,
                quietAfterRejection: 0,
                latency: null,
                quickest: null,
                pausedUntil: 0,
                lastDecrease: Number.NEGATIVE_INFINITY,
                lastUsed: now,
            };
            this.origins.set(origin, state);
        }
        return state;
    }

    /** An overload: the limit halves (once a round trip) and probing starts up again from there. */
    private decrease(state: Origin, now: number): void {
        // A probe met the overload: its limit goes with it.
        const limitBefore = state.probe?.from ?? state.limit;
        state.probe = undefined;
        state.reference = null;
        state.direction = "up";
        state.step = SLOW_START_STEP;
        state.quiet = 0;
        state.quietAfterRejection = 0;
        // The failures of one overload arrive together: one halving a round trip.
        const halve = now - state.lastDecrease >= Math.max(state.latency ?? 0, 100);
        if (halve) {
            state.lastDecrease = now;
        }
        const limit = halve ? Math.max(this.options.floor, limitBefore * DECREASE) : limitBefore;
        state.round = newRound(now, limit, limit !== state.limit, state.inFlight);
        state.limit = limit;
    }
}
