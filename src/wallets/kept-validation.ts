import Joi from "joi";

import { MAX_KEPT_QUERY_CHARS } from "./pagination-memo";
import { yieldToEventLoop } from "./sliced-sort";

/** A route's validation as Hapi takes it in place of a schema: the value as validated, or a throw. */
export type KeptValidation = (value: unknown, options: Joi.ValidationOptions) => Promise<unknown>;

const isPlain = (value: unknown): value is Record<string, unknown> => {
    if (typeof value !== "object" || value === null) {
        return false;
    }
    const prototype: unknown = Object.getPrototypeOf(value);
    return prototype === Object.prototype || prototype === null;
};

/**
 * The containers of a validated value copied, so that a request that changes its query (core-api's
 * pagination sets `page` and `limit` in place) never changes the next one's. Anything else (Joi's
 * BigNumbers, which no operation changes, strings, numbers) is shared.
 */
const copyOf = (value: unknown): unknown => {
    if (Array.isArray(value)) {
        return value.map(copyOf);
    }
    if (isPlain(value)) {
        const copy: Record<string, unknown> = {};
        for (const key of Object.keys(value)) {
            copy[key] = copyOf(value[key]);
        }
        return copy;
    }
    return value;
};

/**
 * A listing's query schema whose answers are kept for each query as the client wrote it. Joi's
 * validation of a wallet listing's query was 10-15 KB of the node's garbage a request (a sampling
 * heap profile), and clients ask a handful of queries over and over. The schema reads nothing but
 * the value and constant options (a listing's schema refers only to `$configuration`), so the same
 * query validates to the same value: only the first is validated; the others get a copy of its
 * value. A query that fails is validated every time, and Hapi answers its error as before.
 */
export const keptValidation = (schema: Joi.Schema, capacity: number): KeptValidation => {
    const kept = new Map<string, unknown>();
    return async (value, options) => {
        let key: string | undefined;
        try {
            key = JSON.stringify(value);
        } catch {
            key = undefined; // not plain data: validated as it is, never kept
        }
        if (key !== undefined && key.length > MAX_KEPT_QUERY_CHARS) {
            key = undefined; // a long query is validated every time: a client inventing them fills nothing
        }
        if (key !== undefined && kept.has(key)) {
            return copyOf(kept.get(key));
        }
        // A query Joi has not seen runs code it has not run for that shape (about a millisecond apiece
        // in V8's CPU profile of a first listing); the five queries of a first listing, arriving
        // together, were validated in one turn with the thread's start, and those first turns held
        // the event loop 16-37 ms at 100,000 wallets. Each takes a turn of its own.
        await yieldToEventLoop();
        const validated: unknown = await schema.validateAsync(value, options);
        if (key !== undefined) {
            kept.set(key, validated);
            if (kept.size > capacity) {
                kept.delete(kept.keys().next().value as string);
            }
        }
        return copyOf(validated);
    };
};
