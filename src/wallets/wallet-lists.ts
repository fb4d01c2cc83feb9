import { Contracts } from "@arkecosystem/core-kernel";
import { WalletCriteria, WalletResource } from "@arkecosystem/core-api/dist/resources-new";

import { Chunk, CHUNK, ChunkedList, chunkWithRoom } from "./chunked-list";
import { ShardedMap } from "./sharded-map";
import { forEachSliced, forOfSliced, SLICE_MS, sortPositionsSliced, yieldToEventLoop } from "./sliced-sort";
import { SortScratch } from "./sort-scratch";
import { UNDECIDED, WalletListOrder } from "./sort-keys";
import { compileWalletFilter, WalletFilter } from "./wallet-filter";
import { KEEP_POSITION } from "./wallet-messages";
import { compareLikeCoreApi } from "./wallet-order";

export interface CriteriaTester {
    testStandardCriterias<T>(value: T, ...criterias: Contracts.Search.StandardCriteriaOf<T>[]): boolean;
}

// Each distinct orderBy keeps its own sorted list, each distinct filter its matches; a handful of
// each covers what clients (explorers, wallets polling a rich list) actually ask between blocks.
const MAX_CACHED_ORDERS = 8;
const MAX_CACHED_FILTERS = 16;
// A list not read for this many versions (a version per request that found changes) is dropped.
const MAX_VERSIONS_BEHIND = 64;
// Entries drawn for sorting are kept in blocks of 2^12.
const BLOCK_BITS = 12;
const BLOCK_MASK = (1 << BLOCK_BITS) - 1;
// A list further behind than this share of the wallets is sorted again rather than patched.
const PATCH_LIMIT_SHARE = 0.05;
// The block's refresh looks up this often for requests that came meanwhile, and gives way to them.
const REFRESH_SLICE_MS = 1;

/**
 * One wallet as listed: core-api's resource and the wallet's place in the repository (core-api's
 * tie-break). A wallet that changes gets a new entry; the old one is marked superseded, and every
 * list drops it the next time it is brought up to date.
 */
interface Entry {
    resource: WalletResource;
    sequence: number;
    superseded: boolean;
    /** The version that brought it: a list sorted from an older version gets it by patching. */
    born: number;
}

/** A wallet's entry before a change (none if it is new) and after it (none if it is gone). */
interface Move {
    before?: Entry;
    after?: Entry;
}

interface Change {
    version: number;
    /** The wallets that changed, in the order they changed. */
    moves: Move[];
    /** How many of them have an entry after it. */
    entering: number;
}

interface SortedList {
    version: number;
    items: ChunkedList<Entry>;
    accepts: (entry: Entry) => boolean;
    /** Set while changes are patched in, in slices: nobody reads the list meanwhile. */
    patching?: Promise<void>;
    /** Requests waiting for its patching to end: a refresh patching it goes on whatever else is under way. */
    awaited: number;
}

const touch = <T>(cache: Map<string, T>, key: string, value: T, limit: number): void => {
    cache.delete(key);
    if (cache.size >= limit) {
        cache.delete(cache.keys().next().value as string);
    }
    cache.set(key, value);
};

/** A page of a listing: the wallets as the lists hold them, and how many the listing has. */
export interface ListedPage {
    results: WalletResource[];
    totalCount: number;
}

/**
 * The node's wallets as core-api lists them, kept current as they change instead of rebuilt. It
 * lives in the wallet thread, off the node's loop and heap: the node's thread sends each changed
 * wallet as a resource (`put`), a batch at a time, and each batch becomes a version. A request
 * brings its list up to date by removing each changed wallet's old entry and inserting its new
 * one, each found by binary search in a list kept in chunks (ChunkedList), so a block costs a few
 * hundred small splices, not a pass over a million wallets; no list is sorted again. Building a
 * list from nothing (the first request of an order, or one too far behind) sorts in slices, so
 * that other requests and the node's changes are taken in between.
 */
export class WalletLists {
    private readonly entries = new ShardedMap<Entry>();
    private readonly changes: Change[] = [];
    private readonly orders = new Map<string, SortedList>();
    private readonly filtered = new Map<string, SortedList>();
    private version = 0;
    /** The last place in the repository's order given to a wallet. */
    private lastSequence = -1;
    /** Bumped by clear(): a list sorted from entries since replaced is never kept. */
    private generation = 0;
    private readonly sortings = new Map<string, Promise<SortedList>>();
    /** Versions of lists being sorted: the changes after them are kept until they are patched. */
    private readonly sortingFrom: number[] = [];
    /** The sorts asked, one after the other, each in the same scratch memory (see SortScratch). */
    private sortQueue: Promise<unknown> = Promise.resolve();
    private readonly scratch = new SortScratch();
    private sortsUnderWay = 0;
    /** Page requests being answered, and the refresh waiting for them (see giveWayToRequests). */
    private requestsUnderWay = 0;
    private refreshWaiting: Array<() => void> = [];

    public constructor(private readonly criteria: CriteriaTester) {}

    public get size(): number {
        return this.entries.size;
    }

    public has(address: string): boolean {
        return this.entries.has(address);
    }

    /**
     * Wallets that are new or changed, as they are now, and where the node's repository now holds
     * each one (`positions`, see repository-order.ts): one version. Positions only grow, so a
     * wallet sent twice in a pass over the repository keeps the later.
     */
    public put(resources: readonly WalletResource[], positions: readonly number[] = []): void {
        const moves: Move[] = [];
        resources.forEach((resource, index) => {
            const previous = this.entries.get(resource.address);
            if (previous) {
                previous.superseded = true;
            }
            const position = positions[index] ?? KEEP_POSITION;
            const sequence =
                position === KEEP_POSITION
                    ? (previous?.sequence ?? this.lastSequence + 1)
                    : Math.max(position, previous?.sequence ?? position);
            this.lastSequence = Math.max(this.lastSequence, sequence);
            const entry: Entry = {
                resource,
                sequence,
                superseded: false,
                born: this.version + 1,
            };
            this.entries.set(resource.address, entry);
            moves.push({ before: previous, after: entry });
        });
        this.record(moves);
    }

    /** Wallets the node no longer has: one version. */
    public remove(addresses: readonly string[]): void {
        const moves: Move[] = [];
        for (const address of addresses) {
            const previous = this.entries.get(address);
            if (previous) {
                previous.superseded = true;
                moves.push({ before: previous });
                this.entries.delete(address);
            }
        }
        this.record(moves);
    }

    /** Forgets every wallet and list: the node's state is sent again from the start. */
    public clear(): void {
        this.entries.clear();
        this.orders.clear();
        this.filtered.clear();
        this.changes.length = 0;
        this.lastSequence = -1;
        this.generation++;
        this.version++;
    }

    /**
     * Brings every list kept up to date, so that the requests after a block find them current. It
     * gives way to requests: between two lists, and every millisecond within one, it lets the
     * thread take the questions waiting (the lists of a block took 9-10 ms in one go at 100,000
     * wallets, and the first request after the block waited for all of them), and it waits while a
     * request brings its own list up to date.
     */
    public async refresh(): Promise<void> {
        for (const list of [...this.orders.values(), ...this.filtered.values()]) {
            await yieldToEventLoop();
            await this.giveWayToRequests();
            try {
                await this.bringUpToDate(list, { limited: true, refreshing: true });
            } catch {
                // A list whose values core-api cannot compare was dropped; its next request
                // answers the error as core-api does.
            }
        }
    }

    /** How far each list kept has come (diagnostics and tests). */
    public state(): { version: number; lists: number[]; changesKept: number; sortsUnderWay: number } {
        return {
            version: this.version,
            lists: [...this.orders.values(), ...this.filtered.values()].map((list) => list.version),
            changesKept: this.changes.length,
            sortsUnderWay: this.sortsUnderWay,
        };
    }

    public async page(
        pagination: Contracts.Search.Pagination,
        sorting: Contracts.Search.Sorting,
        ...criterias: WalletCriteria[]
    ): Promise<ListedPage> {
        this.requestsUnderWay++;
        try {
            return await this.answerPage(pagination, sorting, ...criterias);
        } finally {
            this.requestsUnderWay--;
            this.resumeRefresh();
        }
    }

    /**
     * Waits while requests are under way, unless a request waits for `list`, the one the refresh
     * patches: then the patch is that request's, and goes on beside the others (waiting for them
     * would keep it waiting as long as others kept coming). A request brings its own list up to
     * date alone, rather than in turns with the refresh's: with turns, the first request after a
     * block at a million wallets waited for slices of lists it did not ask.
     */
    private async giveWayToRequests(list?: SortedList): Promise<void> {
        while (this.requestsUnderWay > 0 && !(list && list.awaited > 0)) {
            await new Promise<void>((resume) => this.refreshWaiting.push(resume));
        }
    }

    /** The refresh looks again whether it may go on (see giveWayToRequests). */
    private resumeRefresh(): void {
        const waiting = this.refreshWaiting;
        this.refreshWaiting = [];
        waiting.forEach((resume) => resume());
    }

    private async answerPage(
        pagination: Contracts.Search.Pagination,
        sorting: Contracts.Search.Sorting,
        ...criterias: WalletCriteria[]
    ): Promise<ListedPage> {
        // core-api appends the same tie-breaker to every wallet listing.
        const sortingWithTieBreak = [...sorting, { property: "balance", direction: "desc" as const }];
        const orderKey = JSON.stringify(sortingWithTieBreak);
        const unfiltered = criterias.every((criteria) => Object.keys(criteria).length === 0);
        const listKey = unfiltered
            ? orderKey
            : `${orderKey} ${JSON.stringify(criterias, (_key, value: unknown) => (typeof value === "bigint" ? `${value}n` : value))}`;
        for (;;) {
            const cache = unfiltered ? this.orders : this.filtered;
            const list = cache.get(listKey);
            if (list && (await this.bringUpToDate(list, { limited: true, refreshing: false }))) {
                if (!this.isCurrent(list) || cache.get(listKey) !== list) {
                    continue; // wallets changed while it was patched in slices
                }
                touch(cache, listKey, list, unfiltered ? MAX_CACHED_ORDERS : MAX_CACHED_FILTERS);
                return {
                    results: list.items.slice(pagination.offset, pagination.limit).map((entry) => entry.resource),
                    totalCount: list.items.length,
                };
            }
            // Requests for the same new list wait for one sort.
            let sorting = this.sortings.get(listKey);
            if (!sorting) {
                sorting = this.sortedList(sortingWithTieBreak, unfiltered ? undefined : criterias).finally(() =>
                    this.sortings.delete(listKey),
                );
                this.sortings.set(listKey, sorting);
            }
            const generation = this.generation;
            const sorted = await sorting;
            if (generation === this.generation) {
                // Kept even if wallets changed since: the next turn patches it.
                touch(cache, listKey, sorted, unfiltered ? MAX_CACHED_ORDERS : MAX_CACHED_FILTERS);
            }
        }
    }

    private record(moves: Move[]): void {
        this.version++;
        const entering = moves.reduce((count, move) => count + (move.after ? 1 : 0), 0);
        this.changes.push({ version: this.version, moves, entering });
        this.forgetChangesNoListNeeds();
    }
    private forgetChangesNoListNeeds(): void {
        // A list nobody has read for a while is dropped rather than kept: it would hold every change
        // since its last read (a one-off query would grow the log for ever). Asked again, it is sorted.
        for (const cache of [this.orders, this.filtered]) {
            for (const [key, list] of cache) {
                if (this.version - list.version > MAX_VERSIONS_BEHIND) {
                    cache.delete(key);
                }
            }
        }
        const oldest = Math.min(
            ...[...this.orders.values(), ...this.filtered.values()].map((list) => list.version),
            ...this.sortingFrom,
            this.version,
        );
        while (this.changes.length > 0 && this.changes[0].version <= oldest) {
            this.changes.shift();
        }
    }

    /** The list holds the state of this moment: no change came since it was patched. */
    private isCurrent(list: SortedList): boolean {
        return list.version === this.version && list.patching === undefined;
    }

    /**
     * Patches a list to the current version; false when it is too far behind to patch (`limited`:
     * more changes than a sort would cost). `refreshing`: the block's refresh patches it, and gives
     * way to requests.
     */
    private async bringUpToDate(
        list: SortedList,
        { limited, refreshing }: { limited: boolean; refreshing: boolean },
    ): Promise<boolean> {
        for (;;) {
            if (list.patching) {
                await this.waitForPatch(list, !refreshing);
                continue;
            }
            if (list.version === this.version) {
                return true;
            }
            const pending = this.changes.filter((change) => change.version > list.version);
            if (pending.length === 0 || pending[0].version !== list.version + 1) {
                return false; // changes this list needs were forgotten
            }
            const changed = pending.reduce((total, change) => total + change.entering, 0);
            if (limited && changed > Math.max(256, this.entries.size * PATCH_LIMIT_SHARE)) {
                return false;
            }
            list.patching = this.patch(list, pending, refreshing).finally(() => (list.patching = undefined));
            await list.patching;
        }
    }

    /** Waits for the list's patch under way; a request waiting for it keeps a refresh patching it from giving way. */
    private async waitForPatch(list: SortedList, byRequest: boolean): Promise<void> {
        if (!byRequest) {
            await list.patching;
            return;
        }
        list.awaited++;
        this.resumeRefresh(); // a refresh that gave way may be patching this very list
        try {
            await list.patching;
        } finally {
            list.awaited--;
        }
    }

    /**
     * Moves each changed wallet from its old entry's place to its new one's, in the order they
     * changed (a wallet changed twice moves twice; entries are snapshots, so a superseded entry is
     * still found where its old values sort), yielding whenever a slice has run; the refresh's patch
     * also gives way to requests.
     */
    private async patch(list: SortedList, pending: Change[], refreshing: boolean): Promise<void> {
        const sliceMs = refreshing ? REFRESH_SLICE_MS : SLICE_MS;
        let sliceStart = performance.now();
        const step = async (): Promise<void> => {
            if (performance.now() - sliceStart > sliceMs) {
                await yieldToEventLoop();
                if (refreshing) {
                    await this.giveWayToRequests(list);
                }
                sliceStart = performance.now();
            }
        };
        try {
            for (const change of pending) {
                for (const { before, after } of change.moves) {
                    const listedBefore = before !== undefined && list.accepts(before);
                    const listedAfter = after !== undefined && list.accepts(after);
                    if (listedBefore && listedAfter) {
                        list.items.replace(before, after);
                    } else if (listedBefore) {
                        list.items.remove(before);
                    } else if (listedAfter) {
                        list.items.insert(after);
                    } else {
                        continue;
                    }
                    await step();
                }
                list.version = change.version;
            }
        } catch (error) {
            // Values core-api cannot compare (it throws too): the half-patched list is dropped.
            this.forget(list);
            throw error;
        }
    }

    private forget(list: SortedList): void {
        for (const cache of [this.orders, this.filtered]) {
            for (const [key, cached] of cache) {
                if (cached === list) {
                    cache.delete(key);
                }
            }
        }
    }

    private async sortedList(
        sorting: Contracts.Search.Sorting,
        criterias: WalletCriteria[] | undefined,
    ): Promise<SortedList> {
        const compareResources = compareLikeCoreApi<WalletResource>(sorting);
        const order = new WalletListOrder<Entry>(
            sorting,
            (entry) => entry.resource,
            (entry) => entry.sequence,
            (left, right) => compareResources(left.resource, right.resource) || left.sequence - right.sequence,
        );
        const filter = criterias ? this.compileFilter(criterias) : undefined;
        const accepts = filter ? (entry: Entry) => filter(entry.resource) : () => true;
        // One at a time: sorts taken in turns in this one thread would all end as late as the last
        // (five at a million: answered after 12-18 s), and each would need scratch of its own.
        const sorted = this.sortQueue.then(() => this.sortCurrent(accepts, order));
        this.sortQueue = sorted.catch(() => undefined);
        const { list, version } = await sorted;
        try {
            // The changes that came while it was sorted are patched in whatever their number:
            // sorting again would meet as many, and never finish.
            await this.bringUpToDate(list, { limited: false, refreshing: false });
            return list;
        } finally {
            this.sortingFrom.splice(this.sortingFrom.indexOf(version), 1);
        }
    }

    /** The wallets of this moment that `accepts` takes, sorted; the changes after it are kept until patched in. */
    private async sortCurrent(
        accepts: (entry: Entry) => boolean,
        order: WalletListOrder<Entry>,
    ): Promise<{ list: SortedList; version: number }> {
        const version = this.version;
        this.sortingFrom.push(version);
        this.sortsUnderWay++;
        try {
            const items = await this.matchingSorted(version, accepts, order);
            return { list: { version, items, accepts, awaited: 0 }, version };
        } catch (error) {
            this.sortingFrom.splice(this.sortingFrom.indexOf(version), 1);
            throw error;
        } finally {
            this.sortsUnderWay--;
        }
    }

    private async matchingSorted(
        version: number,
        accepts: (entry: Entry) => boolean,
        order: WalletListOrder<Entry>,
    ): Promise<ChunkedList<Entry>> {
        const { stride } = order;
        // Entries in blocks: one growing array of a million would be copied whole, in one go, each
        // time it grew. Their numbers in the scratch, which holds as many as there are wallets.
        const entryBlocks: Entry[][] = [];
        const keys = this.scratch.keysFor(this.entries.size, stride);
        const entryAt = (position: number): Entry => entryBlocks[position >>> BLOCK_BITS][position & BLOCK_MASK];
        let count = 0;
        // Over the Map itself: a copy of a million entries would hold the event loop. Wallets put
        // meanwhile are born after `version`: there are never more than at its start.
        await forOfSliced(this.entries.values(), (entry) => {
            if (!entry.superseded && entry.born <= version && accepts(entry)) {
                if ((count & BLOCK_MASK) === 0) {
                    entryBlocks.push([]);
                }
                entryBlocks[entryBlocks.length - 1].push(entry);
                order.keysOf(entry, keys, count * stride);
                count++;
            }
        });
        // Positions are sorted, by the numbers drawn once per entry, and by the entries where those tie.
        const sorted = await sortPositionsSliced(
            count,
            (left, right) => {
                const byKeys = order.compareKeys(keys, left * stride, keys, right * stride);
                return byKeys === UNDECIDED ? order.compare(entryAt(left), entryAt(right)) : byKeys;
            },
            this.scratch.positionsFor(count),
        );
        const chunks: Chunk<Entry>[] = [];
        await forEachSliced(
            Math.ceil(sorted.length / CHUNK),
            (chunk) => {
                const start = chunk * CHUNK;
                const size = Math.min(CHUNK, sorted.length - start);
                chunks.push(
                    chunkWithRoom<Entry>(size, stride, (items, chunkKeys) => {
                        for (let index = 0; index < size; index++) {
                            const position = sorted[start + index];
                            const from = position * stride;
                            for (let key = 0; key < stride; key++) {
                                chunkKeys[index * stride + key] = keys[from + key];
                            }
                            items[index] = entryAt(position);
                        }
                    }),
                );
            },
            1,
        );
        return ChunkedList.fromChunks(order, chunks);
    }

    private compileFilter(criterias: WalletCriteria[]): WalletFilter {
        const compiled = criterias.map(compileWalletFilter);
        if (compiled.every((filter): filter is WalletFilter => filter !== undefined)) {
            return (wallet) => compiled.every((filter) => filter(wallet));
        }
        return (wallet) => this.criteria.testStandardCriterias(wallet, ...criterias);
    }
}
