import Hapi from "@hapi/hapi";

/** A listing handler's answer, before core-api's pagination puts it into its envelope (and after). */
interface ListingSource {
    results?: unknown;
    totalCount?: unknown;
    meta?: unknown;
    response?: unknown;
    data?: unknown;
}

/** A response whose source is replaced in place, as core-api's Ext does (Hapi types it read-only). */
interface ReplaceableResponse {
    source: unknown;
    statusCode: number;
    isBoom?: boolean;
}

/**
 * A listing asked with a longer path and query is paginated every time, never kept: its links repeat
 * its query five times, and a client inventing long queries would otherwise fill the node's heap.
 */
export const MAX_KEPT_QUERY_CHARS = 1024;

/** The envelope's `meta` as a listing answered it, for the same query, total and page size. */
type Meta = Record<string, unknown>;

/** The response of a request answered with success, and its source where it is an object. */
const listingOf = (request: Hapi.Request): { response: ReplaceableResponse; source: ListingSource } | undefined => {
    const response: ReplaceableResponse | null = request.response as Hapi.ResponseObject | null;
    if (!response || response.isBoom || response.statusCode < 200 || response.statusCode > 299) {
        return undefined;
    }
    const source = response.source as ListingSource | null;
    return typeof source === "object" && source !== null && !Array.isArray(source) ? { response, source } : undefined;
};

/**
 * core-api's pagination envelope (its Ext's onPostHandler and the base-path fix after it), kept for
 * each listing asked. Its links were a sixth to a quarter of what the node's thread allocates for a
 * listing (13-24 KB a request in a sampling heap profile: a clone and a merge of the query and a
 * query-string writer for each of five links), and a young collection of the node's heap takes
 * 3-4 ms at a million wallets. The envelope's meta is a function of the path, the query as the client
 * wrote it (its parsed and defaulted values follow from it), the listing's own meta, its total and
 * its page's size: with all of them equal, the meta written before is the meta core-api writes now.
 * Whatever else (an error, a source core-api's Ext would copy more from) goes to the Ext as before.
 */
export class PaginationMemo {
    private readonly metas = new Map<string, Meta>();

    public constructor(
        /** core-api's envelope, written into the request's response (its Ext, and what follows it). */
        private readonly paginate: (request: Hapi.Request, h: Hapi.ResponseToolkit) => void,
        private readonly capacity: number,
    ) {}

    public get size(): number {
        return this.metas.size;
    }

    /** Puts the response's listing into core-api's envelope, as `paginate` does. */
    public envelope(request: Hapi.Request, h: Hapi.ResponseToolkit): void {
        const listing = listingOf(request);
        const key = listing && this.keyOf(request, listing.source);
        if (key === undefined || listing === undefined) {
            this.paginate(request, h);
            return;
        }
        const { response, source } = listing;
        const meta = this.metas.get(key);
        if (meta) {
            // As core-api's Ext does: the response keeps its status and headers, its source replaced.
            response.source = { meta: { ...meta }, data: source.results };
            return;
        }
        this.paginate(request, h);
        const paginated = listingOf(request)?.source;
        if (paginated === source || !this.isEnvelopeOf(paginated, source.results)) {
            return; // not a listing core-api's Ext paginates: nothing to keep
        }
        this.metas.set(key, { ...(paginated.meta as Meta) });
        if (this.metas.size > this.capacity) {
            this.metas.delete(this.metas.keys().next().value as string);
        }
    }

    /** The inputs of the envelope's meta, or undefined where core-api's Ext would read more. */
    private keyOf(request: Hapi.Request, source: ListingSource): string | undefined {
        const { results, totalCount, meta, response } = source;
        const query = `${request.url.pathname}${request.url.search}`;
        if (
            !Array.isArray(results) ||
            response !== undefined ||
            typeof totalCount !== "number" ||
            query.length > MAX_KEPT_QUERY_CHARS
        ) {
            return undefined;
        }
        let listingMeta: string | undefined;
        try {
            listingMeta = JSON.stringify(meta);
        } catch {
            return undefined; // not plain data: core-api's Ext copies it as it is
        }
        return `${query}\n${totalCount}\n${results.length}\n${listingMeta}`;
    }

    private isEnvelopeOf(source: ListingSource | undefined, results: unknown): source is { meta: Meta } {
        return (
            source !== undefined &&
            Object.keys(source).join() === "meta,data" &&
            typeof source.meta === "object" &&
            source.meta !== null &&
            source.data === results
        );
    }
}
