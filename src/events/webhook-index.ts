import { performance } from "perf_hooks";

import { Webhook } from "../contracts";
import { ConditionOptions } from "./conditions";
import { compileMatcher, PayloadMatcher } from "./matcher";

export interface IndexedWebhook {
    webhook: Webhook;
    matcher: PayloadMatcher;
}

export interface MatchResult {
    matched: Webhook[];
    /** Webhooks left untested, or tested in part, when the deadline passed. */
    deferred: Webhook[];
}

const monotonicNow = (): number => performance.now();

/**
 * The enabled webhooks by event name, with their conditions compiled, kept in step with the
 * register so that the listener never touches the database to decide what matches.
 */
export class WebhookIndex {
    private readonly byEvent = new Map<string, Map<string, IndexedWebhook>>();
    private readonly eventOf = new Map<string, string>();

    public constructor(private readonly options: ConditionOptions) {}

    public put(webhook: Webhook): void {
        this.remove(webhook.id);
        if (!webhook.enabled) {
            return;
        }
        let forEvent = this.byEvent.get(webhook.event);
        if (!forEvent) {
            forEvent = new Map();
            this.byEvent.set(webhook.event, forEvent);
        }
        forEvent.set(webhook.id, { webhook, matcher: compileMatcher(webhook.conditions, webhook.match, this.options) });
        this.eventOf.set(webhook.id, webhook.event);
    }

    public remove(id: string): void {
        const event = this.eventOf.get(id);
        if (event === undefined) {
            return;
        }
        const forEvent = this.byEvent.get(event);
        forEvent?.get(id)?.matcher.dispose();
        forEvent?.delete(id);
        if (forEvent?.size === 0) {
            this.byEvent.delete(event);
        }
        this.eventOf.delete(id);
    }

    /** An enabled webhook by id, from memory. */
    public get(id: string): Webhook | undefined {
        return this.entry(id)?.webhook;
    }

    /** The compiled conditions of an enabled webhook. */
    public matcherOf(id: string): PayloadMatcher | undefined {
        return this.entry(id)?.matcher;
    }

    /**
     * The enabled webhooks of an event whose conditions hold, tested until `deadline` passes on
     * the monotonic clock (`performance.now()`); those not decided by then are `deferred`, and so
     * is every webhook with a regexp condition: one test of an accepted pattern can take a few
     * milliseconds, more than the listener's whole budget, so none runs on the listener's path.
     */
    public matching(event: string, payload: unknown, deadline = Infinity, now = monotonicNow): MatchResult {
        const result: MatchResult = { matched: [], deferred: [] };
        let tested = 0;
        let outOfTime = false;
        for (const { webhook, matcher } of this.byEvent.get(event)?.values() ?? []) {
            // The first webhook tested is always tested, so every event makes progress whatever the clock says.
            outOfTime ||= tested > 0 && now() > deadline;
            if (outOfTime || matcher.usesRegexp) {
                result.deferred.push(webhook);
                continue;
            }
            tested++;
            const verdict = matcher.testWithin(payload, 0, deadline, now);
            if (!verdict.done) {
                result.deferred.push(webhook);
                outOfTime = true;
            } else if (verdict.matches) {
                result.matched.push(webhook);
            }
        }
        return result;
    }

    public get size(): number {
        return this.eventOf.size;
    }

    /**
     * Why the webhook, once enabled, would take the register over its number of distinct regexp
     * patterns; undefined when it fits. Its own current patterns count as freed.
     */
    public regexpOverflow(webhook: Pick<Webhook, "id" | "enabled" | "conditions">): string | undefined {
        if (!webhook.enabled) {
            return undefined;
        }
        const { regexps } = this.options;
        const sourcesOf = (conditions: Webhook["conditions"]): string[] =>
            conditions
                .filter((condition) => condition.condition === "regexp")
                .map((condition) => String(condition.value));
        const after = regexps.sizeAfter(
            sourcesOf(webhook.conditions),
            sourcesOf(this.entry(webhook.id)?.webhook.conditions ?? []),
        );
        return after > regexps.maxPatterns
            ? `"conditions" would take the register to ${after} distinct regexp patterns, over limits.regexpPatterns (${regexps.maxPatterns}); reuse a pattern or remove another webhook's`
            : undefined;
    }

    private entry(id: string): IndexedWebhook | undefined {
        const event = this.eventOf.get(id);
        return event === undefined ? undefined : this.byEvent.get(event)?.get(id);
    }
}
