import { performance } from "perf_hooks";

import { Webhook } from "../contracts";
import { ConditionOptions } from "./conditions";
import { EqualityIndex, lookupPairsOf } from "./equality-index";
import { compileMatcher, PayloadMatcher } from "./matcher";

export interface IndexedWebhook {
    webhook: Webhook;
    matcher: PayloadMatcher;
}

export interface MatchResult {
    matched: Webhook[];
    /** Webhooks left untested, or tested in part, when the deadline passed. */
    deferred: Webhook[];
    /**
     * Ids of the event's webhooks left to the delivery engine, none tested on the listener's path:
     * first those with no condition (`owedInGroup` of them), then those with a regexp condition,
     * then, past TESTED_ON_LISTENER_PATH, those the equality index cannot find.
     * The same array from call to call until the event's webhooks change, so that the journal can
     * write it once and refer to it: a thousand ids in every record cost the node's loop more than
     * the rest of the listener, and with ten webhooks, their delivery ids and their place in the
     * record were half of its work. Absent when there are none.
     */
    deferredGroup?: readonly string[];
    /** How many of `deferredGroup`, its first ones, have no condition: the event owes each a delivery. */
    owedInGroup?: number;
}

const monotonicNow = (): number => performance.now();

/**
 * Webhooks of one event whose conditions are tested on the listener's path, at most: past this
 * many, those the equality index cannot find are left to the delivery engine, by group, so that
 * the listener's cost and the journal's records do not grow with the register.
 */
const TESTED_ON_LISTENER_PATH = 64;

interface EventSplit {
    /** Found by the values their `eq` conditions expect; found is matched where `exact`, else tested. */
    equality: EqualityIndex<IndexedWebhook>;
    exact: Set<IndexedWebhook>;
    /** The others tested on the listener's path, within its budget. */
    plain: IndexedWebhook[];
    /** The webhooks without a condition, then those tested by the engine; see MatchResult. */
    groupIds: readonly string[] | undefined;
    unconditional: number;
}

/**
 * The enabled webhooks by event name, with their conditions compiled, kept in step with the
 * register so that the listener never touches the database to decide what matches.
 */
export class WebhookIndex {
    private readonly byEvent = new Map<string, Map<string, IndexedWebhook>>();
    private readonly eventOf = new Map<string, string>();
    /** Each event's webhooks split for the listener, made again after any of them changes. */
    private readonly splits = new Map<string, EventSplit>();
    private readonly resplit = new Set<string>();
    private resplitTimer: NodeJS.Immediate | undefined;

    /** Each changed event's group before its first change of the turn (see `onGroup`). */
    private readonly replacedGroups = new Map<string, readonly string[] | undefined>();

    /**
     * `onGroup` hears each event's new `deferredGroup` in the turn that makes it, off any event's
     * path, with the group it replaces: the journal writes the new one before the first record that
     * refers to it, and forgets the replaced one if no record did.
     */
    public constructor(
        private readonly options: ConditionOptions,
        private readonly onGroup: (
            group: readonly string[] | undefined,
            replaced: readonly string[] | undefined,
        ) => void = () => undefined,
    ) {}

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
        this.changed(webhook.event);
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
        this.changed(event);
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
     * the monotonic clock (`performance.now()`); those not decided by then are `deferred`. Every
     * webhook with a regexp condition is in `deferredGroup`: one test of an accepted pattern can
     * take a few milliseconds, more than the listener's whole budget, so none runs on its path.
     */
    public matching(event: string, payload: unknown, deadline = Infinity, now = monotonicNow): MatchResult {
        const result: MatchResult = { matched: [], deferred: [] };
        const split = this.splitOf(event);
        if (!split) {
            return result;
        }
        let tested = split.plain;
        if (split.equality.size > 0) {
            const found = split.equality.candidates(payload);
            if (found.size > 0) {
                tested = [];
                for (const entry of found) {
                    if (split.exact.has(entry)) {
                        result.matched.push(entry.webhook);
                    } else {
                        tested.push(entry);
                    }
                }
                tested.push(...split.plain);
            }
        }
        let outOfTime = false;
        for (let index = 0; index < tested.length; index++) {
            const { webhook, matcher } = tested[index];
            // The first webhook tested is always tested, so every event makes progress whatever the clock says.
            outOfTime ||= index > 0 && now() > deadline;
            if (outOfTime) {
                result.deferred.push(webhook);
                continue;
            }
            const verdict = matcher.testWithin(payload, 0, deadline, now);
            if (!verdict.done) {
                result.deferred.push(webhook);
                outOfTime = true;
            } else if (verdict.matches) {
                result.matched.push(webhook);
            }
        }
        if (split.groupIds) {
            result.deferredGroup = split.groupIds;
            result.owedInGroup = split.unconditional;
        }
        return result;
    }

    /**
     * Drops the event's split and makes it again once the changes of this turn are in, off any
     * event's path: the first event after a change would otherwise pay for a pass over its webhooks.
     */
    private changed(event: string): void {
        if (!this.replacedGroups.has(event)) {
            this.replacedGroups.set(event, this.splits.get(event)?.groupIds);
        }
        this.splits.delete(event);
        this.resplit.add(event);
        this.resplitTimer ??= setImmediate(() => {
            this.resplitTimer = undefined;
            const events = [...this.resplit];
            this.resplit.clear();
            for (const name of events) {
                const group = this.splitOf(name)?.groupIds;
                const replaced = this.replacedGroups.get(name);
                this.replacedGroups.delete(name);
                if (group !== replaced) {
                    this.onGroup(group, replaced);
                }
            }
        });
        this.resplitTimer.unref();
    }

    private splitOf(event: string): EventSplit | undefined {
        let split = this.splits.get(event);
        if (!split) {
            const forEvent = this.byEvent.get(event);
            if (!forEvent) {
                return undefined;
            }
            // One pass: a register of 100,000 webhooks on one event makes this again at every change.
            const equality = new EqualityIndex<IndexedWebhook>();
            const exact = new Set<IndexedWebhook>();
            let plain: IndexedWebhook[] = [];
            const unconditional: string[] = [];
            const regexps: string[] = [];
            for (const entry of forEvent.values()) {
                const pairs = lookupPairsOf(entry.webhook);
                if (entry.matcher.unconditional) {
                    unconditional.push(entry.webhook.id);
                } else if (entry.matcher.usesRegexp) {
                    regexps.push(entry.webhook.id);
                } else if (pairs) {
                    equality.add(pairs.pairs, entry);
                    if (pairs.exact) {
                        exact.add(entry);
                    }
                } else {
                    plain.push(entry);
                }
            }
            let tested: string[] = regexps;
            if (plain.length > TESTED_ON_LISTENER_PATH) {
                tested = regexps.concat(plain.map((entry) => entry.webhook.id));
                plain = [];
            }
            const groupIds = unconditional.concat(tested);
            split = {
                equality,
                exact,
                plain,
                groupIds: groupIds.length > 0 ? Object.freeze(groupIds) : undefined,
                unconditional: unconditional.length,
            };
            this.splits.set(event, split);
        }
        return split;
    }

    /** The names of the events some enabled webhook listens to. */
    public eventNames(): IterableIterator<string> {
        return this.byEvent.keys();
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
