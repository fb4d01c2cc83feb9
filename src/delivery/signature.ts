import { Webhook as StandardWebhook } from "standardwebhooks";

export const AUTHORIZATION_PREFIX_LENGTH = 32;

export interface SignedHeaders {
    authorization: string;
    "webhook-id": string;
    "webhook-timestamp": string;
    "webhook-signature": string;
}

/**
 * The headers that prove a delivery's origin: ARK's `Authorization` (the token's first half, which
 * receivers written for ARK's plugin complete with the half they kept) and the Standard Webhooks
 * signature, keyed with the bytes the token's hex encodes.
 */
export const signDelivery = (token: string, deliveryId: string, body: string, now: Date): SignedHeaders => {
    const signer = new StandardWebhook(Buffer.from(token, "hex"), { format: "raw" });
    return {
        authorization: token.slice(0, AUTHORIZATION_PREFIX_LENGTH),
        "webhook-id": deliveryId,
        "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
        "webhook-signature": signer.sign(deliveryId, now, body),
    };
};
