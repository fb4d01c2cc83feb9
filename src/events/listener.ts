import { newDeliveryId } from "../delivery/delivery-id";
import { JournaledEvent } from "../store/delivery-store";
import { OWN_EVENT_PREFIX } from "./catalogue";
import { serializePayload } from "./serialize-payload";
import { WebhookIndex } from "./webhook-index";

export interface KernelEvent {
    name: string | symbol;
    data: unknown;
}

export interface ListenerStats {
    eventsSeen: number;
    /** How many events of each name arrived since boot. */
    byEvent: Map<string, number>;
    deliveriesQueued: number;
    lastEvent: string | null;
    lastEventAt: number | null;
    errors: number;
}

export interface ListenerDependencies {
    index: WebhookIndex;
    /** Writes an event and the deliveries it owes, durably, before returning. */
    journal: (event: JournaledEvent) => void;
    /** Tells the dispatcher that deliveries are waiting. */
    onQueued: (webhookIds: string[]) => void;
    onError: (error: unknown, event: string) => void;
    clock?: () => number;
}

/**
 * Listens to every kernel event. It only matches and writes what it owes to the outbox, then
 * returns: the kernel awaits its listeners, so the network is never on this path.
 */
export class KernelEventListener {
    public readonly stats: ListenerStats = {
        eventsSeen: 0,
        byEvent: new Map(),
        deliveriesQueued: 0,
        lastEvent: null,
        lastEventAt: null,
        errors: 0,
    };
    private readonly clock: () => number;

    public constructor(private readonly dependencies: ListenerDependencies) {
        this.clock = dependencies.clock ?? Date.now;
    }

    public handle({ name, data }: KernelEvent): void {
        if (typeof name !== "string" || name.startsWith(OWN_EVENT_PREFIX)) {
            return;
        }
        const now = this.clock();
        this.stats.eventsSeen++;
        this.stats.byEvent.set(name, (this.stats.byEvent.get(name) ?? 0) + 1);
        this.stats.lastEvent = name;
        this.stats.lastEventAt = now;
        try {
            const matched = this.dependencies.index.matching(name, data);
            if (matched.length === 0) {
                return;
            }
            // Every webhook of an event gets the same bytes: serialise once.
            const body = `{"timestamp":${now},"event":${JSON.stringify(name)},"data":${serializePayload(data)}}`;
            const webhookIds = matched.map((webhook) => webhook.id);
            this.dependencies.journal({
                event: name,
                body,
                createdAt: now,
                deliveries: webhookIds.map((webhookId) => ({ id: newDeliveryId(), webhookId })),
            });
            this.stats.deliveriesQueued += matched.length;
            this.dependencies.onQueued(webhookIds);
        } catch (error) {
            // Never throw into the kernel: a failing plugin must not stop block processing.
            this.stats.errors++;
            this.dependencies.onError(error, name);
        }
    }
}
