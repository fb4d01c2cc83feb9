import { SortScratch } from "../../../src/wallets/sort-scratch";

describe("the sort scratch", () => {
    it("hands out the same memory while it is big enough, and more, with room, once it is not", () => {
        const scratch = new SortScratch();
        const keys = scratch.keysFor(1_000, 3);
        const positions = scratch.positionsFor(1_000);

        expect(keys.length).toBeGreaterThanOrEqual(3_000);
        expect(positions.every((array) => array.length >= 1_000)).toBe(true);
        expect(positions[0].buffer).not.toBe(positions[1].buffer);
        expect(scratch.keysFor(900, 3)).toBe(keys);
        expect(scratch.keysFor(1_050, 2)).toBe(keys);
        expect(scratch.positionsFor(1_050)).toBe(positions);

        const grown = scratch.keysFor(1_000, 4);
        expect(grown).not.toBe(keys);
        expect(grown.length).toBeGreaterThan(4_000);
        expect(scratch.keysFor(1_010, 4)).toBe(grown);
        expect(scratch.positionsFor(2_000)[0].length).toBeGreaterThan(2_000);
    });
});
