import { CHUNK, ChunkedList, chunkWithRoom } from "../../../src/wallets/chunked-list";
import { ListOrder, UNDECIDED } from "../../../src/wallets/sort-keys";

interface Item {
    value: number;
    id: number;
}

/** Numbers that only tell tens apart: the items decide within a ten. */
const byTens: ListOrder<Item> = {
    stride: 1,
    keysOf: (item, into, at) => {
        into[at] = Math.floor(item.value / 10);
    },
    compareKeys: (left, leftAt, right, rightAt) => {
        const order = left[leftAt] - right[rightAt];
        return order < 0 ? -1 : order > 0 ? 1 : UNDECIDED;
    },
    compare: (left, right) => left.value - right.value || left.id - right.id,
};

const randomSource = (seed: number): (() => number) => {
    let state = seed;
    return () => {
        state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
        return state / 2_147_483_648;
    };
};

describe("ChunkedList", () => {
    it("stays sorted through inserts and removes that split and empty chunks, and cuts any page", () => {
        const random = randomSource(5);
        const list = ChunkedList.fromChunks(byTens, []);
        const reference: Item[] = [];
        let id = 0;
        for (let round = 0; round < 6_000; round++) {
            if (reference.length > 0 && random() < 0.35) {
                const [removed] = reference.splice(Math.floor(random() * reference.length), 1);
                expect(list.remove(removed)).toBe(true);
            } else {
                // Few distinct values, so that many items compare equal by their numbers.
                const item = { value: Math.floor(random() * 400), id: id++ };
                list.insert(item);
                reference.push(item);
            }
        }
        reference.sort(byTens.compare);
        expect(list.length).toBe(reference.length);
        expect(list.slice(0, reference.length)).toEqual(reference);
        for (const offset of [0, 1, CHUNK - 1, CHUNK, 2 * CHUNK + 7, reference.length - 3, reference.length]) {
            expect(list.slice(offset, 25)).toEqual(reference.slice(offset, offset + 25));
        }
        expect(list.remove({ value: 3, id: -1 })).toBe(false);
        for (const item of [...reference]) {
            expect(list.remove(item)).toBe(true);
        }
        expect(list.length).toBe(0);
        expect(list.slice(0, 10)).toEqual([]);
    });

    it("replaces an item by its next value, a step or far away, in place, within its chunk or across chunks", () => {
        const random = randomSource(11);
        const list = ChunkedList.fromChunks(byTens, []);
        let reference: Item[] = [];
        let id = 0;
        for (let index = 0; index < 6 * CHUNK; index++) {
            const item = { value: Math.floor(random() * 4_000), id: id++ };
            list.insert(item);
            reference.push(item);
        }
        for (let round = 0; round < 8_000; round++) {
            const old = reference[Math.floor(random() * reference.length)];
            // Most changes move an item a little (equal numbers, a neighbour's place), some far.
            const step = random() < 0.8 ? Math.floor(random() * 21) - 10 : Math.floor(random() * 8_000) - 4_000;
            const fresh = { value: old.value + step, id: random() < 0.5 ? old.id : id++ };
            expect(list.replace(old, fresh)).toBe(true);
            reference = reference.map((item) => (item === old ? fresh : item));
        }
        reference.sort(byTens.compare);
        expect(list.length).toBe(reference.length);
        expect(list.slice(0, reference.length)).toEqual(reference);
        for (const offset of [0, CHUNK - 1, CHUNK, 3 * CHUNK + 5, reference.length - 2]) {
            expect(list.slice(offset, 40)).toEqual(reference.slice(offset, offset + 40));
        }
        for (const item of [...reference]) {
            expect(list.remove(item)).toBe(true);
        }
        expect(list.length).toBe(0);
    });

    it("replaces an absent item by inserting the new one", () => {
        const list = ChunkedList.fromChunks(byTens, []);
        const present = { value: 5, id: 0 };
        list.insert(present);
        const fresh = { value: 1, id: 2 };
        expect(list.replace({ value: 7, id: 1 }, fresh)).toBe(false);
        expect(list.slice(0, 5)).toEqual([fresh, present]);
    });

    it("puts an item after those equal to it, and removes this very item among equals", () => {
        const sameValue: ListOrder<Item> = { ...byTens, compare: (left, right) => left.value - right.value };
        const list = ChunkedList.fromChunks(sameValue, []);
        const items = Array.from({ length: 3 * CHUNK }, (_, id) => ({ value: 42, id }));
        items.forEach((item) => list.insert(item));
        expect(list.slice(0, items.length)).toEqual(items);
        expect(list.remove(items[CHUNK + 3])).toBe(true);
        expect(list.slice(0, items.length)).toEqual(items.filter((_, index) => index !== CHUNK + 3));
    });

    it("builds chunks with room: the first inserts into a built chunk copy none of its numbers", () => {
        const built = Array.from({ length: CHUNK }, (_, id) => ({ value: id * 10, id }));
        const chunk = chunkWithRoom<Item>(built.length, byTens.stride, (items, keys) =>
            built.forEach((item, index) => {
                items[index] = item;
                byTens.keysOf(item, keys, index * byTens.stride);
            }),
        );
        expect(chunk.items).toHaveLength(CHUNK);
        const room = chunk.keys.length;
        const list = ChunkedList.fromChunks(byTens, [chunk]);
        const inserted = Array.from({ length: 32 }, (_, index) => ({ value: index * 100 + 5, id: CHUNK + index }));
        inserted.forEach((item) => list.insert(item));
        // Written within the room it was built with (without room, the first insert grew it).
        expect(chunk.keys).toHaveLength(room);
        expect(list.slice(0, list.length)).toEqual([...built, ...inserted].sort(byTens.compare));
    });
});
