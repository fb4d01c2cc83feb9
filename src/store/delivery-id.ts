import { createHash } from "crypto";
import { stringify, v7 } from "uuid";

/**
 * A delivery's id, sent as `webhook-id`: a UUIDv7, so ids grow with time and each new delivery
 * lands at the end of the outbox's id index instead of at a random page of it.
 */
export const newDeliveryId = (): string => v7();

// Mixed into every id derived from a chain event (16 bytes drawn once for this plugin).
const CHAIN_EVENT_NAMESPACE = Buffer.from("5d0b6a4e3f1c4f0e9a552f7c8b1e6d3a", "hex");
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));
// Digests of webhook ids, kept so that an event's ids cost one hash, not one a webhook.
const WEBHOOK_DIGESTS_KEPT = 100_000;
const webhookDigests = new Map<string, Buffer>();

const digestOf = (text: string): Buffer => createHash("sha1").update(CHAIN_EVENT_NAMESPACE).update(text).digest();

const webhookDigestOf = (webhookId: string): Buffer => {
    let digest = webhookDigests.get(webhookId);
    if (!digest) {
        if (webhookDigests.size >= WEBHOOK_DIGESTS_KEPT) {
            webhookDigests.clear();
        }
        digest = digestOf(webhookId);
        webhookDigests.set(webhookId, digest);
    }
    return digest;
};

/** A UUIDv8 (RFC 9562's version for ids derived as the application decides) of two digests. */
const uuid8Of = (left: Buffer, right: Buffer): string => {
    const byte = (index: number): number => left[index] ^ right[index];
    const hex = (index: number): string => HEX[byte(index)];
    return (
        `${hex(0)}${hex(1)}${hex(2)}${hex(3)}-${hex(4)}${hex(5)}-` +
        `${HEX[(byte(6) & 0x0f) | 0x80]}${hex(7)}-${HEX[(byte(8) & 0x3f) | 0x80]}${hex(9)}-` +
        `${hex(10)}${hex(11)}${hex(12)}${hex(13)}${hex(14)}${hex(15)}`
    );
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
    value !== null && typeof value === "object" && !Array.isArray(value);

/** The round of a delegate wallet: a live wallet's attribute, or its serialised form's. */
const roundOfDelegate = (wallet: unknown): unknown => {
    if (!isRecord(wallet)) {
        return undefined;
    }
    if (typeof wallet.getAttribute === "function") {
        try {
            return (wallet.getAttribute as (key: string) => unknown)("delegate.round");
        } catch {
            return undefined;
        }
    }
    const attributes = isRecord(wallet.attributes) ? wallet.attributes.attributes : undefined;
    const delegate = isRecord(attributes) ? attributes.delegate : undefined;
    return isRecord(delegate) ? delegate.round : undefined;
};

/**
 * The chain object an event is about, when it is one every node following the chain sees alike: a
 * block or a transaction (`data.id`), a vote (`data.transaction.id`), or a round (the delegates of
 * `round.created`, by their round). Undefined for the events of the node itself (its lifecycle, its
 * peers, its caches).
 */
export const chainObjectOf = (data: unknown): string | undefined => {
    if (Array.isArray(data)) {
        const round = data.length > 0 ? roundOfDelegate(data[0]) : undefined;
        return typeof round === "number" && Number.isInteger(round) ? `round ${round}` : undefined;
    }
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

/**
 * Every delivery gets an id of its own (one relay: the SQLite register). The event draws one
 * UUIDv7 and its deliveries take it in turn, each with the id's last 32 (random) bits XORed with
 * its place among them: every id differs (each draw's time and sequence bits do, and places
 * within a draw), each grows with its event's time, and the node's thread makes one draw an
 * event, not one a delivery (with ten webhooks, uuid's random pool ran dry every second event).
 */
export const freshDeliveryIds = (): DeliveryIds => {
    let drawn: { prefix: string; low: number } | undefined;
    let place = 0;
    return () => {
        if (!drawn) {
            const bytes = v7(undefined, new Uint8Array(16));
            drawn = {
                prefix: stringify(bytes).slice(0, 28),
                low: ((bytes[12] << 24) | (bytes[13] << 16) | (bytes[14] << 8) | bytes[15]) >>> 0,
            };
        }
        return `${drawn.prefix}${((drawn.low ^ place++) >>> 0).toString(16).padStart(8, "0")}`;
    };
};

/**
 * Several relays on one register: a chain event's delivery to a webhook gets the same id on every
 * relay that sees the event (a UUIDv8 mixing SHA-1 digests of the webhook's id and of the event's
 * name with the chain object), so that a receiver told of it twice can tell; an event of the
 * relay's own gets an id of its own. One digest an event, and one a webhook, kept.
 */
export const sharedDeliveryIds = (event: string, data: unknown): DeliveryIds => {
    const object = chainObjectOf(data);
    if (object === undefined) {
        return newDeliveryId;
    }
    const eventDigest = digestOf(`${event} ${object}`);
    return (webhookId) => uuid8Of(eventDigest, webhookDigestOf(webhookId));
};

/** How the deliveries of an event get their ids. */
export type DeliveryIdScheme = (event: string, data: unknown) => DeliveryIds;

/** Whether the scheme reads the event's payload: a fresh id needs nothing of it, and the engine then parses no body. */
export const readsPayload = (scheme: DeliveryIdScheme): boolean => scheme !== freshDeliveryIds;

/** The ids a plugin's deliveries get: shared by the relays of one register, or each its own. */
export const deliveryIdScheme = (options: { storage: { driver: "sqlite" | "postgres" } }): DeliveryIdScheme =>
    options.storage.driver === "postgres" ? sharedDeliveryIds : freshDeliveryIds;
