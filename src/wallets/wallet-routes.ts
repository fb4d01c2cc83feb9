import { Ext as PaginationExt } from "@arkecosystem/core-api/dist/plugins/pagination/ext";
import { commaArrayQuery } from "@arkecosystem/core-api/dist/plugins/comma-array-query";
import { dotSeparatedQuery } from "@arkecosystem/core-api/dist/plugins/dot-separated-query";
import {
    lockCriteriaSchema,
    lockSortingSchema,
    transactionSortingSchema,
    walletCriteriaSchemaObject,
    walletParamSchema,
    walletSortingSchema,
} from "@arkecosystem/core-api/dist/resources-new";
import * as Schemas from "@arkecosystem/core-api/dist/schemas";
import Hapi from "@hapi/hapi";
import Joi from "joi";

import { failValidation } from "../http/validation";
import { keptValidation, KeptValidation } from "./kept-validation";
import { PaginationMemo } from "./pagination-memo";
import { ListedWallet, SerializedWallet, writeEnvelope } from "./wallet-json";
import { WalletsController } from "./wallets-controller";

export interface WalletRouteOptions {
    /** core-api's `plugins.pagination.limit`: the largest `limit` a listing accepts. */
    maxPageSize: number;
}

const walletIdParams = Joi.object({ id: Schemas.walletId });

const transactionListingQuery = Joi.object({
    ...Schemas.transactionCriteriaSchemas,
    orderBy: Schemas.transactionsOrderBy,
    transform: Joi.bool().default(true),
})
    .concat(transactionSortingSchema)
    .concat(Schemas.pagination);

/**
 * A range criterion as core-api 3.9.1 writes it (`createRangeCriteriaSchema`), its `{ from, to }`
 * form tried before the single value. core-api tries the value first, and its BigNumber throws a
 * SyntaxError on `{ from }`, which Joi catches: some 40-60 µs of the node's thread for every
 * `balance.from` listing, a tenth of the request or more. No value is both a plain object and a BigNumber,
 * so either order accepts the same queries with the same values; and a query neither accepts gets the
 * same message, since Joi then names the one failure that is not a type mismatch, or says that nothing
 * matched (the wallet-routes tests hold both against core-api's own routes).
 */
const rangeFormFirst = (value: Joi.Schema): Joi.AlternativesSchema =>
    Joi.alternatives(Joi.object({ from: value, to: value }).or("from", "to"), value);

const walletCriteriaSchema = Schemas.createCriteriaSchema({
    ...walletCriteriaSchemaObject,
    balance: rangeFormFirst(Schemas.bigNumber),
    nonce: rangeFormFirst(Schemas.nonNegativeBigNumber),
});

const walletListingQuery = Joi.object()
    .concat(walletCriteriaSchema)
    .concat(walletSortingSchema)
    .concat(Schemas.pagination);

const lockListingQuery = Joi.object().concat(lockCriteriaSchema).concat(lockSortingSchema).concat(Schemas.pagination);

// Listings whose envelope is kept (pagination-memo.ts): a handful of queries, each page and total asked.
const KEPT_ENVELOPES = 1024;
// Wallet listing queries whose validated value is kept (kept-validation.ts).
const KEPT_QUERIES = 256;

const LINKS = ["first", "last", "next", "previous", "self"] as const;

/**
 * A listing whose wallets came written already (wallet-json.ts): the envelope core-api's pagination
 * made is written around them, the same bytes Hapi's JSON.stringify would write, and answered as JSON.
 */
const writtenListing = (request: Hapi.Request, h: Hapi.ResponseToolkit): Hapi.ResponseObject | undefined => {
    const source = (request.response as Hapi.ResponseObject | null)?.source as Record<string, unknown> | undefined;
    const data = source?.data;
    if (!Array.isArray(data) || !data.some((wallet) => wallet instanceof SerializedWallet)) {
        return undefined;
    }
    // Checked just above: `data` is the listing's array (the envelope itself is written, not copied).
    const envelope = source as Record<string, unknown> & { data: readonly ListedWallet[] };
    return h.response(writeEnvelope(envelope)).type("application/json");
};

const relativeToBasePath = (request: Hapi.Request, basePathRest: string): void => {
    const source = (request.response as Hapi.ResponseObject | null)?.source as
        | { meta?: Partial<Record<(typeof LINKS)[number], string | null>> }
        | undefined;
    const meta = source?.meta;
    if (!meta) {
        return;
    }
    for (const link of LINKS) {
        const value = meta[link];
        if (typeof value === "string" && value.startsWith(`${basePathRest}/`)) {
            meta[link] = value.slice(basePathRest.length);
        }
    }
};

/**
 * The wallet routes of core-api 3.9.1, with its schemas, its query parsing (comma lists, dotted
 * keys) and its pagination envelope, so that a request gets core-api's answer byte for byte.
 * Everything is sandboxed to this plugin: the webhook routes keep their own rules.
 */
/** The wallet routes, over the node's state; absent where there is no node (webhook-only tests). */
export interface WalletRoutes {
    controller: WalletsController;
    options: WalletRouteOptions;
}

export const walletRoutesPlugin: Hapi.Plugin<WalletRoutes> = {
    name: "core-wallet-webhooks-wallets",
    multiple: true,
    register(server, { controller, options }) {
        const pagination = new PaginationExt({ query: { limit: { default: 100 } } });
        const sandboxed = { sandbox: "plugin" as const };
        // core-api parses these on every request; here only the wallet routes see them.
        server.ext("onPreAuth", (request, h) => commaArrayQuery.onRequest(request, h), sandboxed);
        server.ext("onPreAuth", (request, h) => dotSeparatedQuery.onRequest(request, h), sandboxed);
        server.ext("onPreHandler", (request, h) => pagination.onPreHandler(request, h), sandboxed);
        // core-api's links are relative to its base path: it strips "/api" from them. Under "/api/v2"
        // the "/v2" goes too, so that the body equals core-api's for the same query.
        const basePathRest = (server.realm.modifiers.route.prefix ?? "").replace(/^\/api/, "");
        // core-api's Ext changes the response in place, and answers h.continue whatever it did.
        const envelopes = new PaginationMemo((request, h) => {
            pagination.onPostHandler(request, h);
            if (basePathRest) {
                relativeToBasePath(request, basePathRest);
            }
        }, KEPT_ENVELOPES);
        server.ext(
            "onPostHandler",
            (request, h) => {
                envelopes.envelope(request, h);
                return writtenListing(request, h) ?? h.continue;
            },
            sandboxed,
        );

        const validate = (rules: {
            params?: Joi.ObjectSchema;
            query?: Joi.ObjectSchema | KeptValidation;
        }): Hapi.RouteOptionsValidate => ({
            ...rules,
            options: { context: { configuration: { plugins: { pagination: { limit: options.maxPageSize } } } } },
            failAction: failValidation,
        });
        const paginated = { pagination: { enabled: true } };
        const walletListing = keptValidation(walletListingQuery, KEPT_QUERIES);
        const transactionRoute = (path: string, handler: Hapi.Lifecycle.Method): Hapi.ServerRoute => ({
            method: "GET",
            path,
            handler,
            options: {
                validate: validate({ params: walletIdParams, query: transactionListingQuery }),
                plugins: paginated,
            },
        });

        server.route([
            {
                method: "GET",
                path: "/wallets",
                handler: (request) => controller.list(request),
                options: { validate: validate({ query: walletListing }), plugins: paginated },
            },
            {
                method: "GET",
                path: "/wallets/top",
                handler: (request) => controller.list(request),
                options: { validate: validate({ query: walletListing }), plugins: paginated },
            },
            {
                method: "GET",
                path: "/wallets/{id}",
                handler: (request) => controller.show(request),
                options: { validate: validate({ params: Joi.object({ id: walletParamSchema }) }) },
            },
            {
                method: "GET",
                path: "/wallets/{id}/locks",
                handler: (request) => controller.locks(request),
                options: {
                    validate: validate({ params: walletIdParams, query: lockListingQuery }),
                    plugins: paginated,
                },
            },
            transactionRoute("/wallets/{id}/transactions", (request, h) => controller.transactions(request, h)),
            transactionRoute("/wallets/{id}/transactions/sent", (request, h) =>
                controller.transactionsSent(request, h),
            ),
            transactionRoute("/wallets/{id}/transactions/received", (request, h) =>
                controller.transactionsReceived(request, h),
            ),
            transactionRoute("/wallets/{id}/votes", (request, h) => controller.votes(request, h)),
        ]);
    },
};
