import { WalletsController as CoreApiWalletsController } from "@arkecosystem/core-api/dist/controllers/wallets";
import { WalletCriteria, walletCriteriaSchemaObject, WalletResource } from "@arkecosystem/core-api/dist/resources-new";
import { Container, Contracts } from "@arkecosystem/core-kernel";
import Hapi from "@hapi/hapi";

import { Identifiers } from "../identifiers";
import { WalletCatalogue } from "./wallet-catalogue";

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
        const pagination = this.getQueryPagination(request.query);
        const sorting = request.query.orderBy as Contracts.Search.Sorting;
        const criteria = this.getQueryCriteria(request.query, walletCriteriaSchemaObject) as WalletCriteria;
        return this.catalogue.page(pagination, sorting, criteria);
    }

    public override async top(request: Hapi.Request): Promise<Contracts.Search.ResultsPage<WalletResource>> {
        return this.index(request);
    }
}
