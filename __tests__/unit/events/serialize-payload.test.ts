import { Utils } from "@arkecosystem/crypto";

import { serializePayload } from "../../../src/events/serialize-payload";

describe("payload serialisation", () => {
    it("writes big numbers as integer strings and buffers as hex", () => {
        const payload = {
            amount: Utils.BigNumber.make("18446744073709551617"),
            fee: 10n,
            signature: Buffer.from("c0ffee", "hex"),
            nested: [{ value: Utils.BigNumber.make(5) }],
        };

        expect(JSON.parse(serializePayload(payload))).toEqual({
            amount: "18446744073709551617",
            fee: "10",
            signature: "c0ffee",
            nested: [{ value: "5" }],
        });
    });

    it("writes a missing payload as null", () => {
        expect(serializePayload(undefined)).toBe("null");
    });

    it("survives a circular payload", () => {
        const payload: Record<string, unknown> = { name: "peer" };
        payload.self = payload;

        expect(JSON.parse(serializePayload(payload))).toEqual({ name: "peer", self: "[Circular]" });
    });
});
