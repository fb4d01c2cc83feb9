import { Contracts } from "@arkecosystem/core-kernel";
import { WalletCriteria, WalletResource } from "@arkecosystem/core-api/dist/resources-new";

import { CHUNK, ChunkedList } from "./chunked-list";
import { forEachSliced, forOfSliced, sortSliced } from "./sliced-sort";
import { compileWalletFilter, WalletFilter } from "./wallet-filter";
import { compareLikeCoreApi } from "./wallet-order";

export interface CriteriaTester {
    testStandardCriterias<T>(value: T, ...criterias: Contracts.Search.StandardCriteriaOf<T>[]): boolean;
}

export type WalletSource = Pick<
    Contracts.State.WalletRepository,
    "allByAddress" | "hasByAddress" | "findByAddress" | "getIndex"
>;

/**
 * How many wallets the repository holds, without copying a million of them into an array:
 * core-state 3.9.1's address index keeps them in a Map (`walletByKey`); elsewhere, count them.
 */
const repositorySize = (repository: WalletSource): number => {
    const byKey: unknown = Reflect.get(repository.getIndex(Contracts.State.WalletIndexes.Addresses), "walletByKey");
    return byKey instanceof Map ? byKey.size : repository.allByAddress().length;
};

// Each distinct orderBy keeps its own sorted list, each distinct filter its matches; a handful of
// each covers what clients (explorers, wallets polling a rich list) actually ask between blocks.
const MAX_CACHED_ORDERS = 8;
const MAX_CACHED_FILTERS = 16;
// A list not read for this many versions (a version per request that found changes) is dropped.
const MAX_VERSIONS_BEHIND = 64;
// A list further behind than this share of the wallets is sorted again rather than patched.
const PATCH_LIMIT_SHARE = 0.05;

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

interface Change {
    version: number;
    /** The entries of the wallets that changed, before and after. */
    superseded: Entry[];
    fresh: Entry[];
}

interface SortedList {
    version: number;
    items: ChunkedList<Entry>;
    accepts: (entry: Entry) => boolean;
    compare: (left: Entry, right: Entry) => number;
}

/**
 * A copy of plain objects and arrays (values such as BigNumber are immutable and shared): the
 * wallet's own attribute object changes in place, and a list's order must not change under it.
 */
const snapshot = (value: unknown): unknown => {
    if (Array.isArray(value)) {
        return value.map(snapshot);
    }
    if (
        value !== null &&
        typeof value === "object" &&
        [Object.prototype, null].includes(Object.getPrototypeOf(value))
    ) {
        return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, snapshot(item)]));
    }
    return value;
};

const toResource = (wallet: Contracts.State.Wallet): WalletResource => ({
    address: wallet.getAddress(),
    publicKey: wallet.getPublicKey(),
    balance: wallet.getBalance(),
    nonce: wallet.getNonce(),
    attributes: snapshot(wallet.getAttributes()) as object,
});

const touch = <T>(cache: Map<string, T>, key: string, value: T, limit: number): void => {
    cache.delete(key);
    if (cache.size >= limit) {
        cache.delete(cache.keys().next().value as string);
    }
    cache.set(key, value);
};

/**
 * The node's wallets as core-api lists them, kept current as they change instead of rebuilt.
 * Every mutation of a core-state wallet (balance, nonce, attribute, public key) dispatches
 * `wallet.property.set` with the wallet, synchronously: `changed()` notes its address. A request
 * first turns the noted addresses into new entries (a few hundred per block), then brings its list
 * up to date by removing each changed wallet's old entry and inserting its new one, each found by
 * binary search in a list kept in chunks (ChunkedList), so a block costs a few hundred small
 * splices, not a pass over a million wallets; no list is sorted again. Building a list from nothing (the first request of an order, or one too far
 * behind) sorts in slices of a few milliseconds, so the node's event loop never waits on it, and
 * the request is answered once it is done, with the state of that moment.
 */
export class WalletCatalogue {
    private readonly entries = new Map<string, Entry>();
    private readonly changedAddresses = new Set<string>();
    private readonly changes: Change[] = [];
    private readonly orders = new Map<string, SortedList>();
    private readonly filtered = new Map<string, SortedList>();
    private version = 0;
    private nextSequence = 0;
    private building: Promise<void> | undefined;
    private built = false;
    private sizeUnsure = true;
    private readonly sortings = new Map<string, Promise<SortedList>>();
    /** Versions of lists being sorted: the changes after them are kept until they are patched. */
    private readonly sortingFrom: number[] = [];

    public constructor(
        private readonly repository: WalletSource,
        private readonly criteria: CriteriaTester,
    ) {}

    /** A wallet of the node's state changed. O(1): called for every property the node sets. */
    public changed(address: string): void {
        this.changedAddresses.add(address);
    }

    /**
     * Something may have changed that no wallet event told of (a block applied or reverted may
     * create wallets silently): the next request compares the repository's size with ours.
     */
    public invalidate(): void {
        this.sizeUnsure = true;
    }

    public async page(
        pagination: Contracts.Search.Pagination,
        sorting: Contracts.Search.Sorting,
        ...criterias: WalletCriteria[]
    ): Promise<Contracts.Search.ResultsPage<WalletResource>> {
        // core-api appends the same tie-breaker to every wallet listing.
        const sortingWithTieBreak = [...sorting, { property: "balance", direction: "desc" as const }];
        const orderKey = JSON.stringify(sortingWithTieBreak);
        const unfiltered = criterias.every((criteria) => Object.keys(criteria).length === 0);
        const listKey = unfiltered ? orderKey : `${orderKey} ${JSON.stringify(criterias)}`;
        for (;;) {
            await this.ensureBuilt();
            this.takeChanges();
            if (!this.built) {
                continue;
            }
            const cache = unfiltered ? this.orders : this.filtered;
            const list = cache.get(listKey);
            if (list && this.bringUpToDate(list)) {
                touch(cache, listKey, list, unfiltered ? MAX_CACHED_ORDERS : MAX_CACHED_FILTERS);
                return {
                    results: list.items.slice(pagination.offset, pagination.limit).map((entry) => entry.resource),
                    totalCount: list.items.length,
                    meta: { totalCountIsEstimate: false },
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
            const fresh = await sorting;
            if (fresh.version === this.version) {
                touch(cache, listKey, fresh, unfiltered ? MAX_CACHED_ORDERS : MAX_CACHED_FILTERS);
            }
        }
    }

    private async ensureBuilt(): Promise<void> {
        while (!this.built) {
            this.building ??= this.buildEntries().finally(() => (this.building = undefined));
            await this.building;
        }
    }

    /** Every wallet's entry, in the repository's order, in slices. */
    private async buildEntries(): Promise<void> {
        this.changedAddresses.clear();
        const wallets = this.repository.allByAddress();
        this.entries.clear();
        this.orders.clear();
        this.filtered.clear();
        this.changes.length = 0;
        this.nextSequence = 0;
        await forEachSliced(wallets.length, (index) => {
            const resource = toResource(wallets[index]);
            this.entries.set(resource.address, {
                resource,
                sequence: this.nextSequence++,
                superseded: false,
                born: 0,
            });
        });
        this.version++;
        this.sizeUnsure = false;
        // Wallets changed while the entries were built are taken as changes.
        this.built = true;
    }

    /** Turns the addresses noted since the last request into new entries, in one version. */
    private takeChanges(): void {
        this.takeChangedAddresses();
        if (!this.sizeUnsure) {
            return;
        }
        this.sizeUnsure = false;
        const size = repositorySize(this.repository);
        if (size < this.entries.size) {
            this.built = false; // a wallet was removed (a state rebuild): everything is built again
        } else if (size > this.entries.size) {
            // Wallets the repository created without a wallet event (rare: one pass over the index).
            for (const wallet of this.repository.allByAddress()) {
                if (!this.entries.has(wallet.getAddress())) {
                    this.changedAddresses.add(wallet.getAddress());
                }
            }
            this.takeChangedAddresses();
        }
    }

    private takeChangedAddresses(): void {
        if (this.changedAddresses.size === 0) {
            return;
        }
        const fresh: Entry[] = [];
        const superseded: Entry[] = [];
        for (const address of this.changedAddresses) {
            const previous = this.entries.get(address);
            if (previous) {
                previous.superseded = true;
                superseded.push(previous);
            }
            if (!this.repository.hasByAddress(address)) {
                this.entries.delete(address);
                continue;
            }
            const entry: Entry = {
                resource: toResource(this.repository.findByAddress(address)),
                sequence: previous?.sequence ?? this.nextSequence++,
                superseded: false,
                born: this.version + 1,
            };
            this.entries.set(address, entry);
            fresh.push(entry);
        }
        this.changedAddresses.clear();
        this.version++;
        this.changes.push({ version: this.version, superseded, fresh });
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

    /** Patches a list to the current version; false when it is too far behind to patch. */
    private bringUpToDate(list: SortedList, limited = true): boolean {
        if (!this.built) {
            return false;
        }
        if (list.version === this.version) {
            return true;
        }
        const pending = this.changes.filter((change) => change.version > list.version);
        if (pending.length === 0 || pending[0].version !== list.version + 1) {
            return false; // changes this list needs were forgotten
        }
        const changed = pending.reduce((total, change) => total + change.fresh.length, 0);
        if (limited && changed > Math.max(256, this.entries.size * PATCH_LIMIT_SHARE)) {
            return false;
        }
        // In order: a wallet changed twice is removed and inserted twice. Entries are snapshots, so
        // a superseded entry is still found where its old values sort.
        for (const change of pending) {
            for (const entry of change.superseded) {
                if (list.accepts(entry)) {
                    list.items.remove(entry, list.compare);
                }
            }
            for (const entry of change.fresh) {
                if (list.accepts(entry)) {
                    list.items.insert(entry, list.compare);
                }
            }
        }
        list.version = this.version;
        return true;
    }

    private async sortedList(
        sorting: Contracts.Search.Sorting,
        criterias: WalletCriteria[] | undefined,
    ): Promise<SortedList> {
        const compareResources = compareLikeCoreApi<WalletResource>(sorting);
        const compare = (left: Entry, right: Entry): number =>
            compareResources(left.resource, right.resource) || left.sequence - right.sequence;
        const filter = criterias ? this.compileFilter(criterias) : undefined;
        const accepts = filter ? (entry: Entry) => filter(entry.resource) : () => true;
        const version = this.version;
        this.sortingFrom.push(version);
        try {
            const list = { version, items: await this.matchingSorted(version, accepts, compare), accepts, compare };
            // The changes that came while it was sorted are patched in whatever their number:
            // sorting again would meet as many, and never finish.
            this.takeChanges();
            if (this.built) {
                this.bringUpToDate(list, false);
            }
            return list;
        } finally {
            this.sortingFrom.splice(this.sortingFrom.indexOf(version), 1);
        }
    }

    private async matchingSorted(
        version: number,
        accepts: (entry: Entry) => boolean,
        compare: (left: Entry, right: Entry) => number,
    ): Promise<ChunkedList<Entry>> {
        const matching: Entry[] = [];
        // Over the Map itself: a copy of a million entries would hold the event loop.
        await forOfSliced(this.entries.values(), (entry) => {
            if (!entry.superseded && entry.born <= version && accepts(entry)) {
                matching.push(entry);
            }
        });
        const sorted = await sortSliced(matching, compare);
        const chunks: Entry[][] = [];
        await forEachSliced(
            Math.ceil(sorted.length / CHUNK),
            (chunk) => {
                chunks.push(sorted.slice(chunk * CHUNK, (chunk + 1) * CHUNK));
            },
            16,
        );
        return ChunkedList.fromChunks(chunks);
    }

    private compileFilter(criterias: WalletCriteria[]): WalletFilter {
        const compiled = criterias.map(compileWalletFilter);
        if (compiled.every((filter): filter is WalletFilter => filter !== undefined)) {
            return (wallet) => compiled.every((filter) => filter(wallet));
        }
        return (wallet) => this.criteria.testStandardCriterias(wallet, ...criterias);
    }
}
