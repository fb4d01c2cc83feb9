import { performance } from "perf_hooks";
import { Agent, request } from "undici";

export interface LoadResult {
    requests: number;
    perSecond: number;
    p50Ms: number;
    p99Ms: number;
    statuses: Record<number, number>;
}

export interface LoadOptions {
    concurrency: number;
    /** Stops after this many requests or this much time, whichever comes first. */
    maxRequests: number;
    maxMs: number;
}

export interface LoadRequest {
    method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
    url: string;
    body?: string;
}

export const percentile = (sorted: number[], fraction: number): number =>
    sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];

/** Runs requests over keep-alive connections at a fixed concurrency; next(i) builds the i-th request. */
export const runLoad = async (next: (index: number) => LoadRequest, options: LoadOptions): Promise<LoadResult> => {
    const agent = new Agent({ connections: options.concurrency, pipelining: 1 });
    const latencies: number[] = [];
    const statuses: Record<number, number> = {};
    let issued = 0;
    const started = performance.now();
    const worker = async (): Promise<void> => {
        while (issued < options.maxRequests && performance.now() - started < options.maxMs) {
            const { method = "GET", url, body } = next(issued++);
            const begin = performance.now();
            const response = await request(url, {
                method,
                body,
                dispatcher: agent,
                headers: body ? { "content-type": "application/json" } : {},
            });
            await response.body.text();
            latencies.push(performance.now() - begin);
            statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
        }
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
    const elapsed = performance.now() - started;
    await agent.close();
    latencies.sort((a, b) => a - b);
    return {
        requests: latencies.length,
        perSecond: (latencies.length / elapsed) * 1000,
        p50Ms: percentile(latencies, 0.5),
        p99Ms: percentile(latencies, 0.99),
        statuses,
    };
};

export const formatRow = (cells: Array<string | number>): string =>
    `| ${cells.map((cell) => (typeof cell === "number" ? cell.toFixed(cell >= 100 ? 0 : 2) : cell)).join(" | ")} |`;
