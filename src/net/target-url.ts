/** A delivery target as the sender reads it, or why it cannot be one. */
export type ParsedTarget = { ok: true; url: URL } | { ok: false; reason: string };

const MAX_PORT = 65_535;

/**
 * The one reading of a target URL, used by the create/update schema and by the sender alike, so
 * that a target the API accepts is always one the sender can post to.
 */
export const parseTarget = (target: string): ParsedTarget => {
    let url: URL;
    try {
        url = new URL(target);
    } catch {
        return { ok: false, reason: "is not a valid URL (check the host and the port, 1 to 65535)" };
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
        return { ok: false, reason: "must be an http or https URL" };
    }
    if (url.hostname === "") {
        return { ok: false, reason: "has no host" };
    }
    if (url.username !== "" || url.password !== "") {
        return { ok: false, reason: "must not carry credentials (user:password@); receivers verify the signature" };
    }
    if (url.port !== "") {
        const port = Number(url.port);
        if (!Number.isInteger(port) || port < 1 || port > MAX_PORT) {
            return { ok: false, reason: `has port ${url.port}; a port is 1 to ${MAX_PORT}` };
        }
    }
    return { ok: true, url };
};
