import { Condition, MatchMode } from "../contracts";
import { compileCondition, ConditionOptions } from "./conditions";
import { compilePath, isMissing } from "./payload-path";

/** One condition's test of a payload: false when it cannot be evaluated. */
type Probe = (payload: unknown) => boolean;

/** Where a time-bounded test stands: the verdict, or the condition to resume from. */
export type Verdict = { done: true; matches: boolean } | { done: false; next: number };

export interface PayloadMatcher {
    /** The verdict, however long the conditions take. */
    test(payload: unknown): boolean;
    /** Tests conditions from `from` until the verdict is known or `now()` passes `deadline`. */
    testWithin(payload: unknown, from: number, deadline: number, now: () => number): Verdict;
    /** Gives back the compiled patterns it holds; the matcher is not used after. */
    dispose(): void;
    /** One of its conditions is a regexp: a single test of it may take a few milliseconds. */
    readonly usesRegexp: boolean;
    /** It has no condition: every event of its name matches, whatever its payload. */
    readonly unconditional: boolean;
}

const compileProbe = (condition: Condition, options: ConditionOptions): Probe => {
    const read = compilePath(condition.key);
    const test = compileCondition(condition, options);
    return (payload) => {
        try {
            const value = read(payload);
            return !isMissing(value) && test(value);
        } catch {
            // A payload the condition cannot be evaluated on (a throwing getter, say) does not match.
            return false;
        }
    };
};

/**
 * Compiles a webhook's conditions once; no conditions means every event of its name fires it.
 * With "any" the first true condition decides, with "all" the first false one.
 */
export const compileMatcher = (
    conditions: readonly Condition[],
    match: MatchMode,
    options: ConditionOptions,
): PayloadMatcher => {
    const held: string[] = [];
    const release = (): void => held.splice(0).forEach((source) => options.regexps.release(source));
    const probes: Probe[] = [];
    try {
        for (const condition of conditions) {
            probes.push(compileProbe(condition, options));
            if (condition.condition === "regexp") {
                held.push(String(condition.value));
            }
        }
    } catch (error) {
        release();
        throw error;
    }
    const decisive = match === "any";
    const testWithin = (payload: unknown, from: number, deadline: number, now: () => number): Verdict => {
        for (let index = from; index < probes.length; index++) {
            if (index > from && now() > deadline) {
                return { done: false, next: index };
            }
            if (probes[index](payload) === decisive) {
                return { done: true, matches: decisive };
            }
        }
        return { done: true, matches: probes.length === 0 || !decisive };
    };
    return {
        test: (payload) => {
            const verdict = testWithin(payload, 0, Infinity, () => 0);
            return verdict.done && verdict.matches;
        },
        testWithin,
        dispose: release,
        usesRegexp: held.length > 0,
        unconditional: probes.length === 0,
    };
};
