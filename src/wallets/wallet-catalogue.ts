import { Contracts } from "@arkecosystem/core-kernel";
import { Utils } from "@arkecosystem/crypto";

import { sortLikeCoreApi } from "./wallet-order";

/** core-api's wallet resource, field for field. */
export interface WalletResource {
    address: string;
    publicKey?: string;
    balance: Utils.BigNumber;
    nonce: Utils.BigNumber;
    attributes: object;
}

export type WalletCriteria = Contracts.Search.StandardCriteriaOf<WalletResource>;

export interface CriteriaTester {
    testStandardCriterias<T>(value: T, ...criterias: Contracts.Search.StandardCriteriaOf<T>[]): boolean;
}

// Each distinct orderBy keeps its own sorted copy; a handful covers what clients actually ask.
const MAX_CACHED_ORDERS = 8;

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
}

/**
 * The node's wallets as core-api lists them, built once per state change instead of on every
 * request: the resources and each requested order are kept until the repository changes
 * (`invalidate()`, called on every wallet event and block), so a request only filters and slices.
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
        const ordered = this.ordered([...sorting, { property: "balance", direction: "desc" }]);
        const end = pagination.offset + pagination.limit;
        const results: WalletResource[] = [];
        let totalCount = 0;
        if (criterias.every((criteria) => Object.keys(criteria).length === 0)) {
            totalCount = ordered.length;
            results.push(...ordered.slice(pagination.offset, end));
        } else {
            for (const wallet of ordered) {
                if (this.criteria.testStandardCriterias(wallet, ...criterias)) {
                    if (totalCount >= pagination.offset && totalCount < end) {
                        results.push(wallet);
                    }
                    totalCount++;
                }
            }
        }
        return { results, totalCount, meta: { totalCountIsEstimate: false } };
    }

    private ordered(sorting: Contracts.Search.Sorting): WalletResource[] {
        const snapshot = this.currentSnapshot();
        const key = JSON.stringify(sorting);
        let ordered = snapshot.orders.get(key);
        if (!ordered) {
            ordered = sortLikeCoreApi(snapshot.wallets, sorting);
            if (snapshot.orders.size >= MAX_CACHED_ORDERS) {
                snapshot.orders.delete(snapshot.orders.keys().next().value as string);
            }
            snapshot.orders.set(key, ordered);
        }
        return ordered;
    }

    private currentSnapshot(): Snapshot {
        if (this.snapshot?.version !== this.version) {
            this.snapshot = {
                version: this.version,
                wallets: this.repository.allByAddress().map(toResource),
                orders: new Map(),
            };
        }
        return this.snapshot;
    }
}
