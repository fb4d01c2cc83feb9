// A million pointers copied costs some 30 ms: a list is kept in chunks, so that a change touches
// one chunk and a page is cut without copying the rest.
export const CHUNK = 512;
const MAX_CHUNK = 2 * CHUNK;

export type Compare<T> = (left: T, right: T) => number;

/** A sorted list in chunks: insert, remove and cut a page in about log(n) steps each. */
export class ChunkedList<T> {
    private starts: number[] | undefined;

    private constructor(
        private readonly chunks: T[][],
        private count: number,
    ) {}

    /** From sorted, non-empty chunks of at most CHUNK items each; the caller hands them over. */
    public static fromChunks<T>(chunks: T[][]): ChunkedList<T> {
        return new ChunkedList(
            chunks,
            chunks.reduce((total, chunk) => total + chunk.length, 0),
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
            if (index >= this.chunks[chunk].length) {
                chunk++;
                index = 0;
                continue;
            }
            page.push(this.chunks[chunk][index++]);
        }
        return page;
    }

    /** Inserts after every item that compares less than or equal to it. */
    public insert(item: T, compare: Compare<T>): void {
        if (this.chunks.length === 0) {
            this.chunks.push([item]);
        } else {
            const chunkIndex = this.firstChunkEndingAfter(item, compare, (order) => order > 0);
            const chunk = this.chunks[chunkIndex];
            let [low, high] = [0, chunk.length];
            while (low < high) {
                const middle = (low + high) >>> 1;
                if (compare(chunk[middle], item) <= 0) {
                    low = middle + 1;
                } else {
                    high = middle;
                }
            }
            chunk.splice(low, 0, item);
            if (chunk.length > MAX_CHUNK) {
                this.chunks.splice(chunkIndex + 1, 0, chunk.splice(CHUNK));
            }
        }
        this.count++;
        this.starts = undefined;
    }

    /** Removes this very item (found among those that compare equal to it); false if absent. */
    public remove(item: T, compare: Compare<T>): boolean {
        if (this.chunks.length === 0) {
            return false;
        }
        for (
            let chunkIndex = this.firstChunkEndingAfter(item, compare, (order) => order >= 0);
            chunkIndex < this.chunks.length;
            chunkIndex++
        ) {
            const chunk = this.chunks[chunkIndex];
            let [low, high] = [0, chunk.length];
            while (low < high) {
                const middle = (low + high) >>> 1;
                if (compare(chunk[middle], item) < 0) {
                    low = middle + 1;
                } else {
                    high = middle;
                }
            }
            for (let index = low; index < chunk.length; index++) {
                if (chunk[index] === item) {
                    chunk.splice(index, 1);
                    if (chunk.length === 0) {
                        this.chunks.splice(chunkIndex, 1);
                    }
                    this.count--;
                    this.starts = undefined;
                    return true;
                }
                if (compare(chunk[index], item) !== 0) {
                    return false;
                }
            }
        }
        return false;
    }

    /** The first chunk whose last item satisfies `after(compare(last, item))`, or the last chunk. */
    private firstChunkEndingAfter(item: T, compare: Compare<T>, after: (order: number) => boolean): number {
        let [low, high] = [0, this.chunks.length - 1];
        while (low < high) {
            const middle = (low + high) >>> 1;
            const chunk = this.chunks[middle];
            if (after(compare(chunk[chunk.length - 1], item))) {
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
                start += chunk.length;
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
