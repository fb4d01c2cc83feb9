import { regexp as arkRegexp } from "@arkecosystem/core-webhooks/dist/conditions";
import { monitorEventLoopDelay, performance } from "perf_hooks";

import { eventually } from "../__tests__/support/http";
import { startPlugin } from "../__tests__/support/plugin-harness";
import { defaults } from "../src/defaults";
import { RegexpPool } from "../src/events/regexp-pool";
import { compileMatcher } from "../src/events/matcher";
import { estimateRegexpCost } from "../src/events/regexp-budget";
import { Collections } from "./collections";
import { formatRow, percentile } from "./load";

const PROGRAM_BUDGET = Number(defaults.limits.regexpProgramSize);
const PATTERNS = Number(defaults.limits.regexpPatterns);
const INPUT_CHARS = Number(defaults.limits.regexpInputChars);
const SIZES = [255, INPUT_CHARS, 65_536];
const DISTINCT_INPUTS = 200;
const EVENTS = 5;
// The issue's own case: a 10 KB vendorField (values past the input cap never match, but are journaled whole).
const LARGE_VENDOR_FIELD = 10_000;
const LARGE_EVENTS = 50;
const ALPHABETS = ["a", "ab", "01", "abcdefghijklmnopqrstuvwxyz0123456789 .,-_", "aé€😀"];

/** Hostile families: nested and counted repetitions, alternations, classes, DFA state blow-ups. */
const FAMILIES: string[] = [
    ...[50, 100, 125, 250, 1000].map((n) => `.{${n}}z`),
    ...[100, 200, 400].map((n) => `[^z]{${n}}z`),
    ...[
        [10, 5],
        [20, 5],
        [40, 3],
        [100, 10],
        [200, 5],
    ].map(([inner, outer]) => `(.{0,${inner}}){0,${outer}}z`),
    ...[12, 16, 30, 60, 120, 250].flatMap((k) => [`[ab]*a[ab]{${k}}c`, `.*a.{${k}}c`, `(a|b)*a(a|b){${k}}c`]),
    ...[10, 30, 60, 100].map((n) => `(a|aa|aaa){${n}}b`),
    "(a+)+$",
    "(x+x+)+y",
    "(.*a){20}z",
    `(${Array.from({ length: 40 }, (_, index) => `w${index.toString(36)}`).join("|")})z`,
];

const randomText = (length: number, alphabet: string): string => {
    const characters = [...alphabet];
    let text = "";
    while (text.length < length) {
        text += characters[Math.floor(Math.random() * characters.length)];
    }
    return text.slice(0, length);
};

interface PatternRun {
    pattern: string;
    size: number;
    accepted: boolean;
    /** Per input size: p99 and max ms of one test, over distinct inputs. */
    bySize: Array<{ p99: number; max: number }>;
}

/** One test of the plugin's compiled condition, as the listener runs it, timed over many distinct inputs. */
const measurePattern = (pattern: string): PatternRun => {
    const cost = estimateRegexpCost(pattern);
    const size = cost.ok ? cost.size : Number.NaN;
    const matcher = compileMatcher([{ key: "v", condition: "regexp", value: pattern }], "any", {
        regexpInputChars: INPUT_CHARS,
        regexps: new RegexpPool(100),
    });
    const bySize = SIZES.map((length) => {
        const times: number[] = [];
        const rounds = length > 4096 ? 10 : DISTINCT_INPUTS / ALPHABETS.length;
        for (let round = 0; round < rounds; round++) {
            for (const alphabet of ALPHABETS) {
                const payload = { v: randomText(length, alphabet) };
                const begin = performance.now();
                matcher.test(payload);
                times.push(performance.now() - begin);
            }
        }
        times.sort((a, b) => a - b);
        return { p99: percentile(times, 0.99), max: times[times.length - 1] };
    });
    return { pattern, size, accepted: cost.ok && size <= PROGRAM_BUDGET, bySize };
};

/**
 * 1,000 webhooks × 50 accepted hostile conditions: what one event costs the node's event loop, with
 * a vendorField of `chars` characters; with `waitForTests`, also how long the engine takes to test
 * every condition.
 */
const matchingCap = async (pattern: string, chars: number, events: number, waitForTests: boolean) => {
    const running = await startPlugin({ delivery: { retryScheduleSeconds: [3600] } });
    // As many distinct patterns as the register allows, each a variant of the hardest one.
    const variants = Array.from({ length: PATTERNS }, (_, index) => `${pattern}|q${index}`);
    const rssBefore = process.memoryUsage().rss;
    for (let index = 0; index < 1_000; index++) {
        const conditions = Array.from({ length: 50 }, (_, condition) => ({
            key: "vendorField",
            condition: "regexp" as const,
            value: variants[(index * 50 + condition) % PATTERNS],
        }));
        await running.plugin.register.create({
            event: "transaction.applied",
            target: "http://127.0.0.1:9/hook",
            enabled: true,
            conditions,
            match: "any",
        });
    }
    // Kernel events come in turns of their own, never in the API write's: the index's split for the
    // event (and the journal's file of its regexp webhooks) are made in the turn after the last change.
    await new Promise((resolve) => setImmediate(resolve));
    const delay = monitorEventLoopDelay({ resolution: 1 });
    const calls: Array<{ begin: number; end: number }> = [];
    // The node's own collections that fell within a listener call: the slowest call's share of them.
    const collections = new Collections();
    delay.enable();
    // The histogram counts a stall from its second tick on: the first event must not come before it.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const started = performance.now();
    for (let event = 0; event < events; event++) {
        // Made before the clock starts: only the listener's own work is timed.
        const data = { vendorField: randomText(chars, "ab"), amount: "1" };
        const begin = performance.now();
        running.plugin.listener.handle({ name: "transaction.applied", data });
        calls.push({ begin, end: performance.now() });
        await new Promise((resolve) => setImmediate(resolve));
    }
    if (waitForTests) {
        await eventually(async () => (running.plugin.journal.backlog() === 0 ? true : undefined), {
            timeoutMs: 600_000,
            intervalMs: 50,
        });
    }
    const matchedAfterMs = performance.now() - started;
    const rssGrowthMb = (process.memoryUsage().rss - rssBefore) / 1e6;
    delay.disable();
    const listenerMs = calls.map(({ begin, end }) => end - begin);
    const slowest = calls[1 + listenerMs.slice(1).indexOf(Math.max(...listenerMs.slice(1)))];
    // Any collection that overlaps the slowest call began before its end.
    const overlapping = await collections.within(Number.NEGATIVE_INFINITY, slowest.end);
    collections.stop();
    await running.stop();
    const collectedWithin = overlapping.reduce(
        (sum, { begin, end }) => sum + Math.max(0, Math.min(end, slowest.end) - Math.max(begin, slowest.begin)),
        0,
    );
    return {
        listenerMaxCollectedMs: collectedWithin,
        listenerFirstMs: listenerMs[0],
        listenerMaxMs: Math.max(...listenerMs.slice(1)),
        listenerMedianMs: [...listenerMs].sort((a, b) => a - b)[Math.floor(listenerMs.length / 2)],
        loopDelayMaxMs: delay.max / 1e6,
        loopDelayP99Ms: delay.percentile(99) / 1e6,
        matchedAfterMs,
        rssGrowthMb,
    };
};

export const benchRegexp = async (): Promise<string[]> => {
    const runs = FAMILIES.map(measurePattern);
    const accepted = runs.filter((run) => run.accepted);
    const worst = SIZES.map((_, index) => Math.max(...accepted.map((run) => run.bySize[index].p99)));
    const worstMax = SIZES.map((_, index) => Math.max(...accepted.map((run) => run.bySize[index].max)));
    const hardest = accepted.reduce((a, b) => (b.bySize[1].p99 > a.bySize[1].p99 ? b : a));
    const cap = await matchingCap(hardest.pattern, 255, EVENTS, true);
    const large = await matchingCap(hardest.pattern, LARGE_VENDOR_FIELD, LARGE_EVENTS, false);

    const begin = performance.now();
    arkRegexp(`${"a".repeat(27)}!!!`, "(a+)+$");
    const arkStall = performance.now() - begin;

    return [
        `Regexp conditions: ${FAMILIES.length} hostile patterns, each tested as the plugin's compiled condition on ${DISTINCT_INPUTS} distinct random inputs of each size (alphabets chosen to drive RE2's DFA into new states). Budget: program size ≤ ${PROGRAM_BUDGET} (estimated), values longer than ${INPUT_CHARS} characters do not match.`,
        "",
        `| pattern | program size | accepted | ${SIZES.map((size) => `p99 / max ms at ${size.toLocaleString("en")} chars`).join(" | ")} |`,
        `|---|---|---|${SIZES.map(() => "---").join("|")}|`,
        ...runs.map((run) =>
            formatRow([
                `\`${run.pattern.length > 40 ? `${run.pattern.slice(0, 40)}…` : run.pattern}\``,
                Number.isNaN(run.size) ? "refused" : run.size,
                run.accepted ? "yes" : "no (422)",
                ...run.bySize.map(({ p99, max }) => `${p99.toFixed(3)} / ${max.toFixed(3)}`),
            ]),
        ),
        "",
        `Worst accepted pattern, p99 / max of one test: ${SIZES.map((size, index) => `${worst[index].toFixed(3)} / ${worstMax[index].toFixed(3)} ms at ${size.toLocaleString("en")} chars`).join("; ")}.`,
        `ARK core-webhooks, \`(a+)+$\` on 30 characters: ${arkStall.toFixed(0)} ms.`,
        "",
        `1,000 webhooks × 50 conditions over ${PATTERNS} distinct variants of the hardest accepted pattern (\`${hardest.pattern}\`, the register's cap on distinct patterns), ${EVENTS} events with a 255-character vendorField: listener median ${cap.listenerMedianMs.toFixed(2)} ms, longest after the first ${cap.listenerMaxMs.toFixed(2)} ms per event (of it in a collection: ${cap.listenerMaxCollectedMs.toFixed(2)} ms), the first ${cap.listenerFirstMs.toFixed(2)} ms (the first run of these paths since start) (regexp conditions are tested in the engine's thread) (budget ${String(defaults.limits.matchingBudgetMs)} ms); event-loop delay p99 ${cap.loopDelayP99Ms.toFixed(1)} ms, max ${cap.loopDelayMaxMs.toFixed(1)} ms while the deferred conditions were tested; all tested after ${(cap.matchedAfterMs / 1000).toFixed(1)} s (${(EVENTS * 50_000).toLocaleString("en")} tests, at most a quarter of the loop); the process grew by ${cap.rssGrowthMb.toFixed(0)} MB.`,
        `The same register, ${LARGE_EVENTS} events with a ${LARGE_VENDOR_FIELD.toLocaleString("en")}-character vendorField: listener median ${large.listenerMedianMs.toFixed(2)} ms, longest after the first ${large.listenerMaxMs.toFixed(2)} ms (of it in a collection: ${large.listenerMaxCollectedMs.toFixed(2)} ms), the first ${large.listenerFirstMs.toFixed(2)} ms; event-loop delay p99 ${large.loopDelayP99Ms.toFixed(1)} ms, max ${large.loopDelayMaxMs.toFixed(1)} ms while they were dispatched.`,
    ];
};
