import { boundedMemo } from "../../../src/delivery/bounded-memo";

describe("boundedMemo", () => {
    it("computes a key's value once while it is held, and forgets every key when the limit is reached", () => {
        const computed: string[] = [];
        const upper = boundedMemo((key: string) => {
            computed.push(key);
            return key.toUpperCase();
        }, 2);

        expect([upper("a"), upper("a"), upper("b"), upper("a")]).toEqual(["A", "A", "B", "A"]);
        expect(computed).toEqual(["a", "b"]);

        // A third key: the two held are forgotten, so "a" is computed again.
        expect([upper("c"), upper("c"), upper("a")]).toEqual(["C", "C", "A"]);
        expect(computed).toEqual(["a", "b", "c", "a"]);
    });
});
