export interface PageMeta {
    count: number;
    pageCount: number;
    totalCount: number;
    next: string | null;
    previous: string | null;
    self: string;
    first: string;
    last: string;
}

export interface PageRequest {
    /** The path the links point at, with the prefix of the request being answered. */
    path: string;
    page: number;
    limit: number;
}

export const pageMeta = ({ path, page, limit }: PageRequest, count: number, totalCount: number): PageMeta => {
    const pageCount = Math.max(1, Math.ceil(totalCount / limit));
    const link = (target: number): string => `${path}?page=${target}&limit=${limit}`;
    return {
        count,
        pageCount,
        totalCount,
        next: page < pageCount ? link(page + 1) : null,
        // Like core-api: a page just past the end still links back to the last one.
        previous: page > 1 && page <= pageCount + 1 ? link(page - 1) : null,
        self: link(page),
        first: link(1),
        last: link(pageCount),
    };
};
