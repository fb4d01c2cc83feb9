import { WalletsController as CoreApiWalletsController } from "@arkecosystem/core-api/dist/controllers/wallets";
import { WalletCriteria, walletCriteriaSchemaObject, WalletResource } from "@arkecosystem/core-api/dist/resources-new";
import { Container, Contracts } from "@arkecosystem/core-kernel";
import Hapi from "@hapi/hapi";

import { Identifiers } from "../identifiers";
import { WalletCatalogue } from "./wallet-catalogue";
import { ListedWallet } from "./wallet-json";

/**
 * core-api's own wallets controller, so that every route answers exactly as core-api does; only
 * the listing is served from the catalogue, which does not rebuild and re-sort every wallet per
 * request.
 */
@Container.injectable()
export class WalletsController extends CoreApiWalletsController {
    @Container.inject(Identifiers.WalletCatalogue)
    private readonly catalogue!: WalletCatalogue;

    public override async index(request: Hapi.Request): Promise<Contracts.Search.ResultsPage<WalletResource>> {
        return this.catalogue.page(...this.listingQuery(request));
    }

    public override async top(request: Hapi.Request): Promise<Contracts.Search.ResultsPage<WalletResource>> {
        return this.index(request);
    }

    /**
     * What the listing routes (`/wallets`, `/wallets/top`) answer: `index`'s page, its wallets
     * written as JSON already where they could be, for the routes to write the envelope around.
     */
    public async list(request: Hapi.Request): Promise<Contracts.Search.ResultsPage<ListedWallet>> {
        return this.catalogue.serializedPage(...this.listingQuery(request));
    }

    private listingQuery(
        request: Hapi.Request,
    ): [Contracts.Search.Pagination, Contracts.Search.Sorting, WalletCriteria] {
        return [
            this.getQueryPagination(request.query),
            request.query.orderBy as Contracts.Search.Sorting,
            this.getQueryCriteria(request.query, walletCriteriaSchemaObject) as WalletCriteria,
        ];
    }
}
