import { KeyNumbers, keyRoom } from "./sort-keys";

// Room added when the scratch grows, as a share of what was asked: a few wallets more than at the
// last sort do not allocate it again.
const HEADROOM = 1 / 8;

const withRoom = (length: number): number => Math.ceil(length * (1 + HEADROOM));

/**
 * The memory a list is sorted in, kept from one sort to the next. Typed arrays live outside the
 * heap, and V8 marks the whole heap each time such memory grows by 64 MB since its last full
 * collection ("external memory pressure"): at a million wallets, five lists sorted at once in
 * arrays of their own (a few MB of numbers and positions each) started four markings of the
 * wallet thread's half-gigabyte heap in 18 s, on the helper threads the node's thread shares.
 * Kept, the scratch is allocated once; lists are sorted one at a time to share it. Its numbers are
 * in the heap (see KeyNumbers): an order of more keys than the last one grows them, and the 30-40
 * MB so replaced counted as external memory started a marking of its own.
 */
export class SortScratch {
    private keys: KeyNumbers = [];
    private positions: [Int32Array, Int32Array] = [new Int32Array(0), new Int32Array(0)];

    /** Room for `count` items' `stride` numbers each, from 0; what it held before is left in it. */
    public keysFor(count: number, stride: number): KeyNumbers {
        if (this.keys.length < count * stride) {
            this.keys = keyRoom(withRoom(count * stride));
        }
        return this.keys;
    }

    /** Two arrays of at least `count` positions, for sorting from one into the other. */
    public positionsFor(count: number): [Int32Array, Int32Array] {
        if (this.positions[0].length < count) {
            this.positions = [new Int32Array(withRoom(count)), new Int32Array(withRoom(count))];
        }
        return this.positions;
    }
}
