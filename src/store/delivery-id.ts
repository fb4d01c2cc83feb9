import { v5, v7 } from "uuid";

/**
 * A delivery's id, sent as `webhook-id`: a UUIDv7, so ids grow with time and each new delivery
 * lands at the end of the outbox's id index instead of at a random page of it.
 */
export const newDeliveryId = (): string => v7();

// The namespace of the ids derived from chain events (a UUIDv4 drawn once for this plugin).
const CHAIN_EVENT_NAMESPACE = "5d0b6a4e-3f1c-4f0e-9a55-2f7c8b1e6d3a";

const isRecord = (value: unknown): value is Record<string, unknown> =>
    value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * The chain object an event is about, when it is one every node following the chain sees alike: a
 * block or a transaction (`data.id`), or a vote (`data.transaction.id`). Undefined for the events of
 * the node itself (its lifecycle, its peers, its caches, its rounds as it computes them).
 */
export const chainObjectOf = (data: unknown): string | undefined => {
    if (!isRecord(data)) {
        return undefined;
    }
    if (typeof data.id === "string" && data.id.length > 0) {
        return data.id;
    }
    const transaction = data.transaction;
    return isRecord(transaction) && typeof transaction.id === "string" && transaction.id.length > 0
        ? transaction.id
        : undefined;
};

/** Makes the delivery ids of one event, a webhook at a time. */
export type DeliveryIds = (webhookId: string) => string;

/** Every delivery gets an id of its own (one relay: the SQLite register). */
export const freshDeliveryIds = (): DeliveryIds => newDeliveryId;

/**
 * Several relays on one register: a chain event's delivery to a webhook gets the same id on every
 * relay that sees the event (a UUIDv5 of the webhook, the event's name and the chain object), so
 * that a receiver told of it twice can tell; an event of the relay's own gets an id of its own.
 */
export const sharedDeliveryIds = (event: string, data: unknown): DeliveryIds => {
    const object = chainObjectOf(data);
    return object === undefined
        ? newDeliveryId
        : (webhookId) => v5(`${webhookId} ${event} ${object}`, CHAIN_EVENT_NAMESPACE);
};

/** How the deliveries of an event get their ids. */
export type DeliveryIdScheme = (event: string, data: unknown) => DeliveryIds;

/** The ids a plugin's deliveries get: shared by the relays of one register, or each its own. */
export const deliveryIdScheme = (options: { storage: { driver: "sqlite" | "postgres" } }): DeliveryIdScheme =>
    options.storage.driver === "postgres" ? sharedDeliveryIds : freshDeliveryIds;
