import Hapi from "@hapi/hapi";

import { accessPlugin, AccessOptions } from "./access";
import { StorageFailure, storageErrorsPlugin } from "./storage-errors";
import { failValidation } from "./validation";

export interface HttpServerOptions extends AccessOptions {
    host: string;
    port: number;
    bodyBytes: number;
    /** Tells the errors the register's storage caused, where the server has one: they answer 503. */
    storageFailure?: StorageFailure;
}

/** Registers the routes of one API prefix; called once for `/api` and once for `/api/v2`. */
export type RouteRegistrar = (server: Hapi.Server, prefix: string) => void | Promise<void>;

export const API_PREFIXES = ["/api", "/api/v2"] as const;

export const createHttpServer = async (
    options: HttpServerOptions,
    registerRoutes: RouteRegistrar,
): Promise<Hapi.Server> => {
    const server = new Hapi.Server({
        host: options.host,
        port: options.port,
        router: { stripTrailingSlash: true },
        routes: {
            payload: { maxBytes: options.bodyBytes, allow: "application/json" },
            validate: { failAction: failValidation },
            response: { emptyStatusCode: 204 },
        },
    });
    await server.register({ plugin: accessPlugin, options });
    if (options.storageFailure) {
        await server.register({ plugin: storageErrorsPlugin, options: { storageFailure: options.storageFailure } });
    }
    for (const prefix of API_PREFIXES) {
        await server.register(
            {
                plugin: {
                    name: `core-wallet-webhooks-routes${prefix.replace(/\//g, "-")}`,
                    register: async (scoped: Hapi.Server) => registerRoutes(scoped, prefix),
                },
            },
            { routes: { prefix } },
        );
    }
    return server;
};
