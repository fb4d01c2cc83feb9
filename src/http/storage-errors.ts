import Boom from "@hapi/boom";
import Hapi from "@hapi/hapi";

import { isStorageError, StorageHealth } from "../store/storage-health";

/**
 * A request that failed because the database file refused it (full, read-only, failing) answers
 * 503 naming the file and the cause, never an opaque 500; the storage is reported degraded.
 */
export const storageErrorsPlugin: Hapi.Plugin<{ health: StorageHealth }> = {
    name: "core-wallet-webhooks-storage-errors",
    register(server, { health }) {
        server.ext("onPreResponse", (request, h) => {
            const response = request.response;
            if (!Boom.isBoom(response)) {
                return h.continue;
            }
            // Hapi boomifies the error thrown, or wraps it as `data` when it does not see an Error.
            const cause = [response, response.data].find(isStorageError);
            if (cause === undefined) {
                return h.continue;
            }
            const message = health.failed("request", cause);
            return Boom.serverUnavailable(message);
        });
    },
};
