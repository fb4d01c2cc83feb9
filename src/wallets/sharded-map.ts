// A Map grows by rehashing every entry at once: at a million wallets one such step holds the event
// loop for some 100 ms. Spread over shards, each holds a few thousand and rehashes in a blink.
const SHARDS = 256;

const shardOf = (key: string): number => {
    let hash = 0;
    for (let index = Math.max(0, key.length - 4); index < key.length; index++) {
        hash = (hash * 31 + key.charCodeAt(index)) | 0;
    }
    return hash & (SHARDS - 1);
};

/** A string-keyed map in shards, for maps of a million entries filled on the event loop. */
export class ShardedMap<V> {
    private readonly shards = Array.from({ length: SHARDS }, () => new Map<string, V>());
    private count = 0;

    public get size(): number {
        return this.count;
    }

    public get(key: string): V | undefined {
        return this.shards[shardOf(key)].get(key);
    }

    public has(key: string): boolean {
        return this.shards[shardOf(key)].has(key);
    }

    public set(key: string, value: V): void {
        const shard = this.shards[shardOf(key)];
        this.count += shard.has(key) ? 0 : 1;
        shard.set(key, value);
    }

    public delete(key: string): boolean {
        const deleted = this.shards[shardOf(key)].delete(key);
        this.count -= deleted ? 1 : 0;
        return deleted;
    }

    public clear(): void {
        this.shards.forEach((shard) => shard.clear());
        this.count = 0;
    }

    /** Every value, shard after shard (no order promised). */
    public *values(): IterableIterator<V> {
        for (const shard of this.shards) {
            yield* shard.values();
        }
    }
}
