import { createHmac, createSecretKey, KeyObject } from "crypto";

import { boundedMemo } from "./bounded-memo";

export const AUTHORIZATION_PREFIX_LENGTH = 32;

export interface SignedHeaders {
    authorization: string;
    "webhook-id": string;
    "webhook-timestamp": string;
    "webhook-signature": string;
}

// A token's key, imported once: tokens are few and fixed for a webhook's life.
const keyOf = boundedMemo((token: string): KeyObject => createSecretKey(Buffer.from(token, "hex")), 10_000);

/**
 * The headers that prove a delivery's origin: ARK's `Authorization` (the token's first half, which
 * receivers written for ARK's plugin complete with the half they kept) and the Standard Webhooks
 * signature (`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`), keyed with the bytes the
 * token's hex encodes. Node's own HMAC: the `standardwebhooks` package signs in JavaScript, some
 * ten times slower; the tests verify every signature with that package.
 */
export const signDelivery = (token: string, deliveryId: string, body: string, now: Date): SignedHeaders => {
    const timestamp = String(Math.floor(now.getTime() / 1000));
    const signature = createHmac("sha256", keyOf(token)).update(`${deliveryId}.${timestamp}.${body}`).digest("base64");
    return {
        authorization: token.slice(0, AUTHORIZATION_PREFIX_LENGTH),
        "webhook-id": deliveryId,
        "webhook-timestamp": timestamp,
        "webhook-signature": `v1,${signature}`,
    };
};
