import { Webhook } from "standardwebhooks";

import { signDelivery } from "../../../src/delivery/signature";

const TOKEN = "0f".repeat(32);
const BODY = '{"timestamp":1,"event":"block.applied","data":{"height":2}}';

describe("signed delivery headers", () => {
    it("carry the token's first 32 characters as ARK's Authorization", () => {
        const headers = signDelivery(TOKEN, "delivery-1", BODY, new Date());

        expect(headers.authorization).toBe(TOKEN.slice(0, 32));
        expect(headers.authorization + TOKEN.slice(32)).toBe(TOKEN);
    });

    it("verify with the Standard Webhooks library, keyed with the token's bytes", () => {
        const headers = signDelivery(TOKEN, "delivery-1", BODY, new Date());
        const verifier = new Webhook(Buffer.from(TOKEN, "hex"), { format: "raw" });

        expect(verifier.verify(BODY, { ...headers })).toEqual(JSON.parse(BODY));
        expect(headers["webhook-id"]).toBe("delivery-1");
        expect(headers["webhook-timestamp"]).toMatch(/^\d{10}$/);
    });

    it("do not verify with another token or another body", () => {
        const headers = signDelivery(TOKEN, "delivery-1", BODY, new Date());
        const other = new Webhook(Buffer.from("1f".repeat(32), "hex"), { format: "raw" });
        const right = new Webhook(Buffer.from(TOKEN, "hex"), { format: "raw" });

        expect(() => other.verify(BODY, { ...headers })).toThrow();
        expect(() => right.verify(BODY.replace("2", "3"), { ...headers })).toThrow();
    });
});
