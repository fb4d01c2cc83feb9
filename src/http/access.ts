import Boom from "@hapi/boom";
import Hapi from "@hapi/hapi";
import { createHash, timingSafeEqual } from "crypto";

import { compileAddressList } from "../net/address-list";

export interface AccessOptions {
    whitelist: readonly string[];
    /** Empty: no key needed. */
    apiKey: string;
}

const digest = (text: string): Buffer => createHash("sha256").update(text).digest();

// Digests have one length, so timingSafeEqual compares keys of any length in constant time.
const keyMatches = (expected: Buffer, presented: string | undefined): boolean =>
    presented !== undefined && timingSafeEqual(expected, digest(presented));

const bearerToken = (header: string | undefined): string | undefined => {
    const match = /^Bearer\s+(.+)$/i.exec(header ?? "");
    return match ? match[1].trim() : undefined;
};

/** Refuses, before anything else runs, a caller outside the allow-list or without the API key. */
export const accessPlugin: Hapi.Plugin<AccessOptions> = {
    name: "core-wallet-webhooks-access",
    register(server, options) {
        const allowed = compileAddressList(options.whitelist);
        const expectedKey = options.apiKey ? digest(options.apiKey) : undefined;
        server.ext("onRequest", (request, h) => {
            if (!allowed(request.info.remoteAddress)) {
                throw Boom.forbidden(`${request.info.remoteAddress} is not in the server.whitelist`);
            }
            if (expectedKey && !keyMatches(expectedKey, bearerToken(request.headers.authorization))) {
                throw Boom.forbidden("a valid API key is required: Authorization: Bearer <server.apiKey>");
            }
            return h.continue;
        });
    },
};
