import { Contracts } from "@arkecosystem/core-kernel";
import { WalletCriteria, WalletResource } from "@arkecosystem/core-api/dist/resources-new";

import { compileWalletFilter, WalletFilter } from "./wallet-filter";
import { sortLikeCoreApi } from "./wallet-order";

export interface CriteriaTester {
    testStandardCriterias<T>(value: T, ...criterias: Contracts.Search.StandardCriteriaOf<T>[]): boolean;
}

// Each distinct orderBy keeps its own sorted copy, each distinct filter its matches; a handful of
// each covers what clients (explorers, wallets polling a rich list) actually ask between blocks.
const MAX_CACHED_ORDERS = 8;
const MAX_CACHED_FILTERS = 16;

const toResource = (wallet: Contracts.State.Wallet): WalletResource => ({
    address: wallet.getAddress(),
    publicKey: wallet.getPublicKey(),
    balance: wallet.getBalance(),
    nonce: wallet.getNonce(),
    attributes: wallet.getAttributes(),
});

interface Snapshot {
    version: number;
    wallets: WalletResource[];
    orders: Map<string, WalletResource[]>;
    filtered: Map<string, WalletResource[]>;
}

const remember = <T>(cache: Map<string, T>, key: string, limit: number, build: () => T): T => {
    let value = cache.get(key);
    if (value === undefined) {
        value = build();
        if (cache.size >= limit) {
            cache.delete(cache.keys().next().value as string);
        }
        cache.set(key, value);
    }
    return value;
};

/**
 * The node's wallets as core-api lists them, built once per state change instead of on every
 * request: the resources, each requested order and each requested filter's matches are kept until
 * the repository changes (`invalidate()`, called on every wallet event and block), so a repeated
 * query between two blocks only slices a page.
 */
export class WalletCatalogue {
    private version = 0;
    private snapshot: Snapshot | undefined;

    public constructor(
        private readonly repository: Pick<Contracts.State.WalletRepository, "allByAddress">,
        private readonly criteria: CriteriaTester,
    ) {}

    /** The repository changed: the next request rebuilds. Cheap enough for every wallet event. */
    public invalidate(): void {
        this.version++;
    }

    public page(
        pagination: Contracts.Search.Pagination,
        sorting: Contracts.Search.Sorting,
        ...criterias: WalletCriteria[]
    ): Contracts.Search.ResultsPage<WalletResource> {
        // core-api appends the same tie-breaker to every wallet listing.
        const sortingWithTieBreak = [...sorting, { property: "balance", direction: "desc" as const }];
        const snapshot = this.currentSnapshot();
        const orderKey = JSON.stringify(sortingWithTieBreak);
        const ordered = remember(snapshot.orders, orderKey, MAX_CACHED_ORDERS, () =>
            sortLikeCoreApi(snapshot.wallets, sortingWithTieBreak),
        );
        const matching = criterias.every((criteria) => Object.keys(criteria).length === 0)
            ? ordered
            : remember(snapshot.filtered, `${orderKey} ${JSON.stringify(criterias)}`, MAX_CACHED_FILTERS, () =>
                  ordered.filter(this.compileFilter(criterias)),
              );
        return {
            results: matching.slice(pagination.offset, pagination.offset + pagination.limit),
            totalCount: matching.length,
            meta: { totalCountIsEstimate: false },
        };
    }

    private compileFilter(criterias: WalletCriteria[]): WalletFilter {
        const compiled = criterias.map(compileWalletFilter);
        if (compiled.every((filter): filter is WalletFilter => filter !== undefined)) {
            return (wallet) => compiled.every((filter) => filter(wallet));
        }
        return (wallet) => this.criteria.testStandardCriterias(wallet, ...criterias);
    }

    private currentSnapshot(): Snapshot {
        if (this.snapshot?.version !== this.version) {
            this.snapshot = {
                version: this.version,
                wallets: this.repository.allByAddress().map(toResource),
                orders: new Map(),
                filtered: new Map(),
            };
        }
        return this.snapshot;
    }
}
