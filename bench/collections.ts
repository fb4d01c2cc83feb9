import { constants, PerformanceEntry, PerformanceObserver } from "perf_hooks";
import { GCProfiler } from "v8";

/** One garbage collection of this thread's heap, in performance.now() times. */
export interface Collection {
    begin: number;
    end: number;
    major: boolean;
}

/**
 * This thread's garbage collections, as a `gc` performance observer reports them: a stall or a
 * slow call can be set beside the collections within it (a pause of the collector holds every
 * route and listener of the node alike).
 */
export class Collections {
    private readonly seen: Collection[] = [];
    private readonly observer = new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) {
            const { detail } = entry as PerformanceEntry & { detail?: { kind?: number } };
            this.seen.push({
                begin: entry.startTime,
                end: entry.startTime + entry.duration,
                major: detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR,
            });
        }
    });

    public constructor() {
        this.observer.observe({ entryTypes: ["gc"] });
    }

    /** The collections that began in from..to, once the observer's entries are in (a turn after each). */
    public async within(from: number, to: number): Promise<Collection[]> {
        await new Promise((resolve) => setImmediate(resolve));
        return this.seen.filter(({ begin }) => begin >= from && begin <= to);
    }

    /** The collections that began in from..to, as within(); forgets those seen so far. */
    public async takeWithin(from: number, to: number): Promise<Collection[]> {
        const taken = await this.within(from, to);
        this.seen.length = 0;
        return taken;
    }

    public stop(): void {
        this.observer.disconnect();
    }
}

/** The longest of these collections, as "<ms> ms (young|major)", or "none". */
export const describeLongest = (collections: readonly Collection[]): string => {
    const longest = collections.reduce<Collection | undefined>(
        (most, collection) => (most && most.end - most.begin >= collection.end - collection.begin ? most : collection),
        undefined,
    );
    return longest ? `${(longest.end - longest.begin).toFixed(1)} ms (${longest.major ? "major" : "young"})` : "none";
};

interface SpaceUse {
    spaceName: string;
    spaceUsedSize: number;
}
interface ProfiledCollection {
    gcType: string;
    beforeGC: { heapSpaceStatistics: SpaceUse[] };
    afterGC: { heapSpaceStatistics: SpaceUse[] };
}

// Where a young collection puts what it promotes.
const OLD_SPACES = new Set(["old_space", "large_object_space"]);

const oldUse = (spaces: readonly SpaceUse[]): number =>
    spaces.reduce((sum, space) => sum + (OLD_SPACES.has(space.spaceName) ? space.spaceUsedSize : 0), 0);

/**
 * What this thread's young collections promoted to its old generation while it ran: the garbage
 * that brings a major collection of the node's heap (some 0.9 GB at a million wallets) is what
 * survived its young ones. Read from V8's own figures before and after each scavenge (v8.GCProfiler).
 */
export class Promotions {
    private profiler: GCProfiler | undefined;

    public start(): void {
        this.profiler = new GCProfiler();
        this.profiler.start();
    }

    /** Bytes promoted since start(). */
    public stop(): number {
        const profile = this.profiler?.stop() as { statistics?: ProfiledCollection[] } | undefined;
        this.profiler = undefined;
        return (profile?.statistics ?? [])
            .filter(({ gcType }) => gcType === "Scavenge" || gcType === "MinorMarkCompact")
            .reduce(
                (sum, { beforeGC, afterGC }) =>
                    sum + oldUse(afterGC.heapSpaceStatistics) - oldUse(beforeGC.heapSpaceStatistics),
                0,
            );
    }
}
