import { Condition, MatchMode } from "../contracts";
import { compileCondition } from "./conditions";
import { compilePath, isMissing } from "./payload-path";

export type PayloadMatcher = (payload: unknown) => boolean;

const compileOne = (condition: Condition): PayloadMatcher => {
    const read = compilePath(condition.key);
    let test: ReturnType<typeof compileCondition>;
    try {
        test = compileCondition(condition);
    } catch {
        // Only a condition that bypassed validation (an imported one) can fail here: it never matches.
        return () => false;
    }
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

/** Compiles a webhook's conditions once; no conditions means every event of its name fires it. */
export const compileMatcher = (conditions: readonly Condition[], match: MatchMode): PayloadMatcher => {
    if (conditions.length === 0) {
        return () => true;
    }
    const tests = conditions.map(compileOne);
    return match === "all"
        ? (payload) => tests.every((test) => test(payload))
        : (payload) => tests.some((test) => test(payload));
};
