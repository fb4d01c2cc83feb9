import Boom from "@hapi/boom";
import Hapi from "@hapi/hapi";

/** The 503 message for an error the database file caused (full, read-only, failing); undefined for others. */
export type StorageFailure = (error: unknown) => string | undefined;

/**
 * A request that failed because the database file refused it answers 503 naming the file and the
 * cause, never an opaque 500.
 */
export const storageErrorsPlugin: Hapi.Plugin<{ storageFailure: StorageFailure }> = {
    name: "core-wallet-webhooks-storage-errors",
    register(server, { storageFailure }) {
        server.ext("onPreResponse", (request, h) => {
            const response = request.response;
            if (!Boom.isBoom(response)) {
                return h.continue;
            }
            // Hapi boomifies the error thrown, or wraps it as `data` when it does not see an Error.
            for (const candidate of [response, response.data]) {
                const message = storageFailure(candidate);
                if (message !== undefined) {
                    return Boom.serverUnavailable(message);
                }
            }
            return h.continue;
        });
    },
};
