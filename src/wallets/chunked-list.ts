import { KeyNumbers, keyRoom, ListOrder, UNDECIDED } from "./sort-keys";

// A million pointers copied costs some 30 ms: a list is kept in chunks, so that a change touches
// one chunk and a page is cut without copying the rest. Each change moves half a chunk's items and
// numbers: at a million wallets a block's 300 changes were patched into the asked list in a median
// of 3.3-3.5 ms with chunks of 128, against 3.8-4.5 ms with 512 (three runs and two, each of about
// 30 blocks, in the wallet thread).
export const CHUNK = 128;
const MAX_CHUNK = 2 * CHUNK;
// Room added to a chunk's numbers when it is full, in items.
const GROWTH = 32;

/** Items in order, and beside them their order's numbers, `stride` per item. */
export interface Chunk<T> {
    items: T[];
    keys: KeyNumbers;
}

/**
 * A chunk of `size` items that `fill` writes, with room for GROWTH more: the first inserts into it
 * copy nothing. Built without that room, every chunk a block touched was copied once, and the
 * copies (a few MB a block at a million wallets) brought the wallet thread's full collections
 * sooner.
 */
export const chunkWithRoom = <T>(
    size: number,
    stride: number,
    fill: (items: T[], keys: KeyNumbers) => void,
): Chunk<T> => {
    const items = new Array<T>(size + GROWTH);
    const keys = keyRoom((size + GROWTH) * stride);
    fill(items, keys);
    // Shortened by less than half, an array keeps its storage (V8 trims only beyond that).
    items.length = size;
    return { items, keys };
};

/**
 * `keys.copyWithin(target, start, end)`: V8's `copyWithin` on a plain array takes each element through
 * the generic property path, 19-29 µs for a chunk's 450 numbers against 0.5 for this loop.
 */
const moveKeys = (keys: KeyNumbers, target: number, start: number, end: number): void => {
    if (target > start) {
        for (let index = end - 1; index >= start; index--) {
            keys[target + index - start] = keys[index];
        }
    } else {
        for (let index = start; index < end; index++) {
            keys[target + index - start] = keys[index];
        }
    }
};

const copyKeys = (from: KeyNumbers, fromAt: number, to: KeyNumbers, toAt: number, count: number): void => {
    for (let index = 0; index < count; index++) {
        to[toAt + index] = from[fromAt + index];
    }
};

/**
 * A sorted list in chunks: insert, remove and cut a page in about log(n) steps each. Searches
 * compare the numbers kept beside the items and read an item only when those cannot tell.
 */
export class ChunkedList<T> {
    private starts: number[] | undefined;
    private readonly probe: KeyNumbers;

    private constructor(
        private readonly order: ListOrder<T>,
        private readonly chunks: Chunk<T>[],
        private count: number,
    ) {
        this.probe = keyRoom(order.stride);
    }

    /** From sorted, non-empty chunks of at most CHUNK items each; the caller hands them over. */
    public static fromChunks<T>(order: ListOrder<T>, chunks: Chunk<T>[]): ChunkedList<T> {
        return new ChunkedList(
            order,
            chunks,
            chunks.reduce((total, chunk) => total + chunk.items.length, 0),
        );
    }

    public get length(): number {
        return this.count;
    }

    /** The items at offset .. offset + limit - 1. */
    public slice(offset: number, limit: number): T[] {
        const starts = this.chunkStarts();
        const page: T[] = [];
        let chunk = Math.max(0, this.chunkAt(starts, offset));
        let index = offset - (starts[chunk] ?? 0);
        while (page.length < limit && chunk < this.chunks.length) {
            if (index >= this.chunks[chunk].items.length) {
                chunk++;
                index = 0;
                continue;
            }
            page.push(this.chunks[chunk].items[index++]);
        }
        return page;
    }

    /** Inserts after every item that compares less than or equal to it. */
    public insert(item: T): void {
        const { stride } = this.order;
        const probe = this.probe;
        this.order.keysOf(item, probe, 0);
        if (this.chunks.length === 0) {
            this.chunks.push(
                chunkWithRoom<T>(1, stride, (items, keys) => {
                    items[0] = item;
                    copyKeys(probe, 0, keys, 0, stride);
                }),
            );
        } else {
            const chunkIndex = this.firstChunkEndingAfter(item, (order) => order > 0);
            const chunk = this.chunks[chunkIndex];
            let [low, high] = [0, chunk.items.length];
            while (low < high) {
                const middle = (low + high) >>> 1;
                if (this.compareAt(chunk, middle, item) <= 0) {
                    low = middle + 1;
                } else {
                    high = middle;
                }
            }
            const used = chunk.items.length * stride;
            if (used + stride > chunk.keys.length) {
                chunk.keys.push(...keyRoom(GROWTH * stride));
            }
            moveKeys(chunk.keys, (low + 1) * stride, low * stride, used);
            copyKeys(probe, 0, chunk.keys, low * stride, stride);
            chunk.items.splice(low, 0, item);
            if (chunk.items.length > MAX_CHUNK) {
                const rest = chunk.items.splice(CHUNK);
                const restChunk = chunkWithRoom<T>(rest.length, stride, (items, keys) => {
                    rest.forEach((restItem, index) => (items[index] = restItem));
                    copyKeys(chunk.keys, CHUNK * stride, keys, 0, rest.length * stride);
                });
                this.chunks.splice(chunkIndex + 1, 0, restChunk);
            }
        }
        this.count++;
        this.starts = undefined;
    }

    /** Removes this very item (found among those that compare equal to it); false if absent. */
    public remove(item: T): boolean {
        if (this.chunks.length === 0) {
            return false;
        }
        const { stride } = this.order;
        this.order.keysOf(item, this.probe, 0);
        for (
            let chunkIndex = this.firstChunkEndingAfter(item, (order) => order >= 0);
            chunkIndex < this.chunks.length;
            chunkIndex++
        ) {
            const chunk = this.chunks[chunkIndex];
            let [low, high] = [0, chunk.items.length];
            while (low < high) {
                const middle = (low + high) >>> 1;
                if (this.compareAt(chunk, middle, item) < 0) {
                    low = middle + 1;
                } else {
                    high = middle;
                }
            }
            for (let index = low; index < chunk.items.length; index++) {
                if (chunk.items[index] === item) {
                    moveKeys(chunk.keys, index * stride, (index + 1) * stride, chunk.items.length * stride);
                    chunk.items.splice(index, 1);
                    if (chunk.items.length === 0) {
                        this.chunks.splice(chunkIndex, 1);
                    }
                    this.count--;
                    this.starts = undefined;
                    return true;
                }
                if (this.compareAt(chunk, index, item) !== 0) {
                    return false;
                }
            }
        }
        return false;
    }

    /** The chunk's item at `index` against `item`, whose numbers are in `probe`. */
    private compareAt(chunk: Chunk<T>, index: number, item: T): number {
        const order = this.order.compareKeys(chunk.keys, index * this.order.stride, this.probe, 0);
        return order === UNDECIDED ? this.order.compare(chunk.items[index], item) : order;
    }

    /** The first chunk whose last item satisfies `after(compare(last, item))`, or the last chunk. */
    private firstChunkEndingAfter(item: T, after: (order: number) => boolean): number {
        let [low, high] = [0, this.chunks.length - 1];
        while (low < high) {
            const middle = (low + high) >>> 1;
            const chunk = this.chunks[middle];
            if (after(this.compareAt(chunk, chunk.items.length - 1, item))) {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        return low;
    }

    private chunkStarts(): number[] {
        if (!this.starts) {
            this.starts = [];
            let start = 0;
            for (const chunk of this.chunks) {
                this.starts.push(start);
                start += chunk.items.length;
            }
        }
        return this.starts;
    }

    /** The chunk holding the item at `offset`. */
    private chunkAt(starts: number[], offset: number): number {
        let [low, high] = [0, starts.length - 1];
        while (low < high) {
            const middle = (low + high + 1) >>> 1;
            if (starts[middle] <= offset) {
                low = middle;
            } else {
                high = middle - 1;
            }
        }
        return low;
    }
}
