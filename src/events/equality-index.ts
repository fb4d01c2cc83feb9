import { Condition, Webhook } from "../contracts";
import { toDecimal } from "./decimal";
import { toPlainValue } from "./normalise";
import { compilePath, isMissing } from "./payload-path";

/**
 * One spelling for every value `eq` holds equal to it (see normalise.ts's valuesEqual): numbers
 * and numeric strings by their exact value with trailing zeros dropped ("100", 100 and "100.0"
 * alike), other strings as they are, booleans and null apart. Undefined for arrays and objects,
 * which are compared member by member and are not looked up.
 */
export const equalityKey = (value: unknown): string | undefined => {
    const plain = toPlainValue(value);
    if (plain === null) {
        return "null";
    }
    if (typeof plain === "boolean") {
        return plain ? "true" : "false";
    }
    if (typeof plain !== "string" && typeof plain !== "number") {
        return undefined;
    }
    const decimal = toDecimal(plain);
    if (decimal) {
        let { digits, scale } = decimal;
        while (scale > 0 && digits % 10n === 0n) {
            digits /= 10n;
            scale--;
        }
        return `n${digits === 0n ? 0n : digits}e${digits === 0n ? 0 : scale}`;
    }
    return typeof plain === "string" ? `s${plain}` : undefined;
};

/**
 * The `eq` conditions by which a webhook can be found, as (key, value) pairs: an event whose
 * payload holds none of them cannot fire it. With match "any" every condition must be such an
 * `eq` (any other could fire it alone); with "all" one of them is enough. `exact`: being found
 * decides it (its other conditions, if any, need no test). Undefined when the webhook cannot be
 * found this way.
 */
export const lookupPairsOf = (
    webhook: Pick<Webhook, "conditions" | "match">,
): { pairs: Condition[]; exact: boolean } | undefined => {
    const findable = (condition: Condition): boolean =>
        condition.condition === "eq" && equalityKey(condition.value) !== undefined;
    if (webhook.conditions.length === 0) {
        return undefined;
    }
    if (webhook.match === "all") {
        const first = webhook.conditions.find(findable);
        return first ? { pairs: [first], exact: webhook.conditions.length === 1 } : undefined;
    }
    return webhook.conditions.every(findable) ? { pairs: [...webhook.conditions], exact: true } : undefined;
};

interface KeySlot<T> {
    read: (payload: unknown) => unknown;
    byValue: Map<string, Set<T>>;
}

/**
 * Webhooks by the values their `eq` conditions expect, per payload key: an event finds the
 * webhooks it may fire with one read and one lookup per key, whatever the register holds. What it
 * finds are candidates; their conditions are still tested (a match "all" webhook's others).
 */
export class EqualityIndex<T> {
    private readonly keys = new Map<string, KeySlot<T>>();

    public add(pairs: readonly Condition[], item: T): void {
        for (const { key, value } of pairs) {
            let slot = this.keys.get(key);
            if (!slot) {
                slot = { read: compilePath(key), byValue: new Map() };
                this.keys.set(key, slot);
            }
            const spelled = equalityKey(value) as string;
            const items = slot.byValue.get(spelled);
            if (items) {
                items.add(item);
            } else {
                slot.byValue.set(spelled, new Set([item]));
            }
        }
    }

    /** The items whose expected values the payload holds, each once. */
    public candidates(payload: unknown): Set<T> {
        const found = new Set<T>();
        for (const slot of this.keys.values()) {
            let value: unknown;
            try {
                value = slot.read(payload);
            } catch {
                continue; // a payload that cannot be read there fires nothing by that key
            }
            if (isMissing(value)) {
                continue;
            }
            const spelled = equalityKey(value);
            const items = spelled === undefined ? undefined : slot.byValue.get(spelled);
            items?.forEach((item) => found.add(item));
        }
        return found;
    }

    public get size(): number {
        return this.keys.size;
    }
}
