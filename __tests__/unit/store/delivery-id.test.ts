import { newDeliveryId } from "../../../src/store/delivery-id";

describe("delivery ids", () => {
    it("are version-7 UUIDs that grow with every call, so the outbox's id index only appends", () => {
        const ids = Array.from({ length: 10_000 }, newDeliveryId);

        ids.forEach((id) =>
            expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        );
        expect([...ids].sort()).toEqual(ids);
        expect(new Set(ids).size).toBe(ids.length);
    });
});
