import { performance } from "perf_hooks";

import { chainObjectOf, DeliveryIds, DeliveryIdScheme, freshDeliveryIds } from "../store/delivery-id";
import { JournaledEvent } from "../store/journal-entry";
import { OWN_EVENT_PREFIX } from "./catalogue";
import { deliveryBody } from "./serialize-payload";
import { WebhookIndex } from "./webhook-index";

export interface KernelEvent {
    name: string | symbol;
    data: unknown;
}

export interface ListenerStats {
    eventsSeen: number;
    /** How many events of each name arrived since boot. */
    byEvent: Map<string, number>;
    /** How many events of each name were journaled: some webhook listened to them and was owed or left to test. */
    journaledByEvent: Map<string, number>;
    /** Deliveries events owe by the listener's matching: webhooks whose conditions held, and those without any. */
    deliveriesQueued: number;
    /** Webhooks whose conditions the listener left to be tested off its path (its budget ran out, or a regexp). */
    deferredTests: number;
    lastEvent: string | null;
    lastEventAt: number | null;
    errors: number;
}

export interface ListenerDependencies {
    index: WebhookIndex;
    /** Takes an event and the deliveries it owes; keeps it (durably, or spooled) before returning. */
    journal: (event: JournaledEvent) => void;
    onError: (error: unknown, event: string) => void;
    /** Time the listener may spend testing conditions for one event; the rest is tested later. */
    matchingBudgetMs: number;
    /** How deliveries get their ids; by default each its own (see store/delivery-id.ts). */
    deliveryIds?: DeliveryIdScheme;
    /** Several relays on one register: this relay's name, said in the deliveries of events of its own. */
    relayName?: string;
}

const toOwed = (webhookIds: readonly { id: string }[], idOf: DeliveryIds) =>
    webhookIds.map((webhook) => ({ id: idOf(webhook.id), webhookId: webhook.id }));

/**
 * Listens to every kernel event. It only matches and hands what it owes to the journal, then
 * returns: the kernel awaits its listeners, so the network is never on this path, and condition
 * testing stops at a per-event budget, whatever the register holds.
 */
export class KernelEventListener {
    public readonly stats: ListenerStats = {
        eventsSeen: 0,
        byEvent: new Map(),
        journaledByEvent: new Map(),
        deliveriesQueued: 0,
        deferredTests: 0,
        lastEvent: null,
        lastEventAt: null,
        errors: 0,
    };
    public constructor(private readonly dependencies: ListenerDependencies) {}

    public handle({ name, data }: KernelEvent): void {
        if (typeof name !== "string" || name.startsWith(OWN_EVENT_PREFIX)) {
            return;
        }
        const now = Date.now();
        this.stats.eventsSeen++;
        this.stats.byEvent.set(name, (this.stats.byEvent.get(name) ?? 0) + 1);
        this.stats.lastEvent = name;
        this.stats.lastEventAt = now;
        try {
            const found = this.owedBy(name, data, now);
            if (!found) {
                return;
            }
            const { owed, owedInGroup } = found;
            this.dependencies.journal(owed);
            this.stats.journaledByEvent.set(name, (this.stats.journaledByEvent.get(name) ?? 0) + 1);
            this.stats.deliveriesQueued += owed.deliveries.length + owedInGroup;
            this.stats.deferredTests += owed.deferred.length + (owed.deferredGroup?.length ?? 0) - owedInGroup;
        } catch (error) {
            // Never throw into the kernel: a failing plugin must not stop block processing.
            this.stats.errors++;
            this.dependencies.onError(error, name);
        }
    }

    /**
     * Runs the listener's path once on a made-up event of `name`, counting and journaling nothing
     * (`rehearse` gets what would have been journaled). V8 compiles a function at its first call:
     * without this, the first kernel event after start pays for the whole path, a millisecond or
     * more on the node's loop (`npm run bench -- regexp`); with it, the start does.
     */
    public warmUp(name: string, rehearse: (event: JournaledEvent) => void): void {
        try {
            const data = { id: "0".repeat(64), amount: "1", vendorField: "warm-up" };
            rehearse(
                this.owedBy(name, data, Date.now())?.owed ?? {
                    event: name,
                    body: deliveryBody(name, Date.now(), data),
                    createdAt: Date.now(),
                    deliveries: [],
                    deferred: [],
                },
            );
        } catch {
            // Nothing depends on it: the first event compiles what this did not.
        }
    }

    /**
     * What the event owes, and how many of its group's webhooks it owes whatever its payload:
     * undefined when no webhook listens to it or none matched.
     */
    private owedBy(
        name: string,
        data: unknown,
        now: number,
    ): { owed: JournaledEvent; owedInGroup: number } | undefined {
        const deadline = performance.now() + this.dependencies.matchingBudgetMs;
        const {
            matched,
            deferred,
            deferredGroup,
            owedInGroup = 0,
        } = this.dependencies.index.matching(name, data, deadline);
        if (matched.length === 0 && deferred.length === 0 && !deferredGroup) {
            return undefined;
        }
        // Every webhook of an event gets the same bytes: serialise once.
        const { relayName } = this.dependencies;
        const relay = relayName !== undefined && chainObjectOf(data) === undefined ? relayName : undefined;
        return {
            owed: {
                event: name,
                body: deliveryBody(name, now, data, relay),
                createdAt: now,
                deliveries:
                    matched.length === 0
                        ? []
                        : toOwed(matched, (this.dependencies.deliveryIds ?? freshDeliveryIds)(name, data)),
                deferred: deferred.map((webhook) => webhook.id),
                ...(deferredGroup ? { deferredGroup } : {}),
            },
            owedInGroup,
        };
    }
}
