import { ShardedMap } from "../../../src/wallets/sharded-map";

describe("ShardedMap", () => {
    it("keeps, replaces, counts and forgets values like a Map", () => {
        const map = new ShardedMap<number>();
        const reference = new Map<string, number>();
        for (let index = 0; index < 5_000; index++) {
            const key = `A${(index * 7_919) % 3_001}`;
            if (index % 5 === 4) {
                expect(map.delete(key)).toBe(reference.delete(key));
            } else {
                map.set(key, index);
                reference.set(key, index);
            }
            expect(map.size).toBe(reference.size);
        }
        for (const [key, value] of reference) {
            expect(map.get(key)).toBe(value);
            expect(map.has(key)).toBe(true);
        }
        expect(map.get("absent")).toBeUndefined();
        expect([...map.values()].sort((a, b) => a - b)).toEqual([...reference.values()].sort((a, b) => a - b));
        map.clear();
        expect(map.size).toBe(0);
        expect([...map.values()]).toEqual([]);
    });
});
