import { isBigNumberLike } from "./big-number";

const replaceSpecial = (raw: unknown, value: unknown): unknown => {
    if (Buffer.isBuffer(raw)) {
        return raw.toString("hex");
    }
    if (typeof value === "bigint") {
        return value.toString();
    }
    if (isBigNumberLike(raw)) {
        return raw.toString();
    }
    return value;
};

/**
 * The body of a delivery of `event`, as every attempt posts it: ARK's shape, and with several
 * relays on one register, the relay that saw an event of its own (its peers, its lifecycle).
 */
export const deliveryBody = (event: string, timestamp: number, payload: unknown, relay?: string): string =>
    `{"timestamp":${timestamp},"event":${JSON.stringify(event)},"data":${serializePayload(payload)}${
        relay === undefined ? "" : `,"relay":${JSON.stringify(relay)}`
    }}`;

/**
 * The JSON text of an event payload as deliveries carry it: big numbers as integer strings,
 * buffers as hex, a missing payload as null, and a repeated or circular object as "[Circular]".
 */
export const serializePayload = (payload: unknown): string => {
    try {
        return (
            JSON.stringify(payload, function (this: Record<string, unknown>, key, value: unknown) {
                return replaceSpecial(this[key], value);
            }) ?? "null"
        );
    } catch {
        const seen = new WeakSet<object>();
        return (
            JSON.stringify(payload, function (this: Record<string, unknown>, key, value: unknown) {
                const replaced = replaceSpecial(this[key], value);
                if (replaced !== null && typeof replaced === "object") {
                    if (seen.has(replaced)) {
                        return "[Circular]";
                    }
                    seen.add(replaced);
                }
                return replaced;
            }) ?? "null"
        );
    }
};
