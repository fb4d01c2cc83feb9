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
    /**
     * Each chunk's last item's numbers, one chunk after the other: the search for a chunk reads this
     * one array instead of a chunk's numbers at each step. Each step was a read from memory not in
     * the CPU's caches: the largest line of a block's patch in V8's profile, per line.
     */
    private readonly lastKeys: KeyNumbers;

    private constructor(
        private readonly order: ListOrder<T>,
        private readonly chunks: Chunk<T>[],
        private count: number,
    ) {
        this.probe = keyRoom(order.stride);
        this.lastKeys = keyRoom(chunks.length * order.stride);
        chunks.forEach((_, chunkIndex) => this.keepLastKeys(chunkIndex));
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
        this.order.keysOf(item, this.probe, 0);
        this.insertProbed(item);
    }

    /** insert(), the item's numbers already in `probe`. */
    private insertProbed(item: T): void {
        const { stride } = this.order;
        const probe = this.probe;
        if (this.chunks.length === 0) {
            this.chunks.push(
                chunkWithRoom<T>(1, stride, (items, keys) => {
                    items[0] = item;
                    copyKeys(probe, 0, keys, 0, stride);
                }),
            );
            this.lastKeys.push(...keyRoom(stride));
            this.keepLastKeys(0);
        } else {
            const chunkIndex = this.firstChunkEndingAfter(item, (order) => order > 0);
            const chunk = this.chunks[chunkIndex];
            const low = this.firstAfter(chunk, 0, chunk.items.length, item);
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
                this.lastKeys.splice((chunkIndex + 1) * stride, 0, ...keyRoom(stride));
                this.keepLastKeys(chunkIndex + 1);
            }
            this.keepLastKeys(chunkIndex);
        }
        this.count++;
        this.starts = undefined;
    }

    /** Removes this very item (found among those that compare equal to it); false if absent. */
    public remove(item: T): boolean {
        const place = this.locate(item);
        if (!place) {
            return false;
        }
        this.removeAt(place.chunkIndex, place.index);
        return true;
    }

    /**
     * Removes `old` (if present) and inserts `fresh`: a wallet's entry before and after a change.
     * Where `fresh` sorts within the chunk that holds `old`, only the items between their places
     * move, instead of half the chunk out and half back in (a third of a patch's profile). Most of a
     * block's changes move a wallet a few places (a fee, a reward): in the bench's blocks, 63% of
     * those of a list by balance stayed in their chunk.
     */
    public replace(old: T, fresh: T): boolean {
        const place = this.locate(old);
        if (!place) {
            this.insert(fresh);
            return false;
        }
        const { chunkIndex, index } = place;
        const chunk = this.chunks[chunkIndex];
        this.order.keysOf(fresh, this.probe, 0);
        const target = this.placeWithinChunk(chunkIndex, index, fresh);
        if (target === undefined) {
            this.removeAt(chunkIndex, index);
            this.insertProbed(fresh);
            return true;
        }
        const { stride } = this.order;
        const { items, keys } = chunk;
        let at: number;
        if (target > index) {
            // Fresh goes before the item at `target`: the items after old shift back by one.
            at = target - 1;
            for (let position = index; position < at; position++) {
                items[position] = items[position + 1];
            }
            moveKeys(keys, index * stride, (index + 1) * stride, target * stride);
        } else {
            at = target;
            for (let position = index; position > at; position--) {
                items[position] = items[position - 1];
            }
            moveKeys(keys, (at + 1) * stride, at * stride, index * stride);
        }
        items[at] = fresh;
        copyKeys(this.probe, 0, keys, at * stride, stride);
        this.keepLastKeys(chunkIndex);
        return true;
    }

    /** Where this very item is; its numbers are left in `probe`. */
    private locate(item: T): { chunkIndex: number; index: number } | undefined {
        if (this.chunks.length === 0) {
            return undefined;
        }
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
                    return { chunkIndex, index };
                }
                if (this.compareAt(chunk, index, item) !== 0) {
                    return undefined;
                }
            }
        }
        return undefined;
    }

    private removeAt(chunkIndex: number, index: number): void {
        const { stride } = this.order;
        const chunk = this.chunks[chunkIndex];
        moveKeys(chunk.keys, index * stride, (index + 1) * stride, chunk.items.length * stride);
        chunk.items.splice(index, 1);
        if (chunk.items.length === 0) {
            this.chunks.splice(chunkIndex, 1);
            this.lastKeys.splice(chunkIndex * stride, stride);
        } else {
            this.keepLastKeys(chunkIndex);
        }
        this.count--;
        this.starts = undefined;
    }

    /**
     * The index in the chunk before which `fresh` (numbers in `probe`) keeps the whole list in
     * order, with the item at `index` still there; undefined when it sorts outside the chunk. Its
     * neighbours are looked at first: most changes leave a wallet where it was.
     */
    private placeWithinChunk(chunkIndex: number, index: number, fresh: T): number | undefined {
        const chunk = this.chunks[chunkIndex];
        const last = chunk.items.length - 1;
        const previous = this.chunks[chunkIndex - 1];
        const next = this.chunks[chunkIndex + 1];
        // Nothing before it is greater, nothing after it is less or equal.
        const fitsAfterPrevious = (position: number): boolean =>
            position > 0
                ? this.compareAt(chunk, position - 1, fresh) <= 0
                : previous === undefined || this.compareAt(previous, previous.items.length - 1, fresh) <= 0;
        const fitsBeforeNext = (position: number): boolean =>
            position < last
                ? this.compareAt(chunk, position + 1, fresh) > 0
                : next === undefined || this.compareAt(next, 0, fresh) > 0;
        const fitsBefore = fitsBeforeNext(index);
        const fitsAfter = fitsAfterPrevious(index);
        if (fitsBefore && fitsAfter) {
            return index;
        }
        // It belongs further on, or further back: within this chunk, if the chunk's far end says so.
        if (fitsAfter ? !fitsBeforeNext(last) : !fitsAfterPrevious(0)) {
            return undefined;
        }
        return fitsAfter ? this.firstAfter(chunk, index + 1, last + 1, fresh) : this.firstAfter(chunk, 0, index, fresh);
    }

    /** The first index in [from, to) of the chunk whose item sorts after `item` (numbers in `probe`), or `to`. */
    private firstAfter(chunk: Chunk<T>, from: number, to: number, item: T): number {
        let [low, high] = [from, to];
        while (low < high) {
            const middle = (low + high) >>> 1;
            if (this.compareAt(chunk, middle, item) <= 0) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        return low;
    }

    /** The chunk's item at `index` against `item`, whose numbers are in `probe`. */
    private compareAt(chunk: Chunk<T>, index: number, item: T): number {
        const order = this.order.compareKeys(chunk.keys, index * this.order.stride, this.probe, 0);
        if (order !== UNDECIDED) {
            return order;
        }
        // Read only here: the items are a pointer chase the numbers spare. An item met while it is
        // searched for is not compared with itself value by value.
        const listed = chunk.items[index];
        return listed === item ? 0 : this.order.compare(listed, item);
    }

    /**
     * The first chunk whose last item satisfies `after(compare(last, item))`, or the last chunk;
     * the item's numbers are in `probe`.
     */
    private firstChunkEndingAfter(item: T, after: (order: number) => boolean): number {
        const { stride } = this.order;
        let [low, high] = [0, this.chunks.length - 1];
        while (low < high) {
            const middle = (low + high) >>> 1;
            let order = this.order.compareKeys(this.lastKeys, middle * stride, this.probe, 0);
            if (order === UNDECIDED) {
                const chunk = this.chunks[middle];
                const last = chunk.items[chunk.items.length - 1];
                order = last === item ? 0 : this.order.compare(last, item);
            }
            if (after(order)) {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        return low;
    }

    /** Copies the chunk's last item's numbers into `lastKeys`, after the chunk changed. */
    private keepLastKeys(chunkIndex: number): void {
        const { stride } = this.order;
        const chunk = this.chunks[chunkIndex];
        copyKeys(chunk.keys, (chunk.items.length - 1) * stride, this.lastKeys, chunkIndex * stride, stride);
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
