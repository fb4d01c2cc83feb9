import { IncomingHttpHeaders, request } from "http";

export interface JsonResponse<T = unknown> {
    status: number;
    headers: IncomingHttpHeaders;
    body: T;
    text: string;
}

export interface RequestInit {
    method?: string;
    body?: unknown;
    headers?: Record<string, string>;
    rawBody?: string;
}

/**
 * A request over real HTTP on a connection of its own, answered as parsed JSON where there is a
 * body. No connection is reused: core-api destroys every socket after its response, and a client
 * reusing one would fail at random.
 */
export const requestJson = <T = Record<string, unknown>>(
    url: string,
    init: RequestInit = {},
): Promise<JsonResponse<T>> =>
    new Promise((resolve, reject) => {
        const payload = init.rawBody ?? (init.body !== undefined ? JSON.stringify(init.body) : undefined);
        const outgoing = request(
            url,
            {
                method: init.method ?? "GET",
                agent: false,
                headers: {
                    ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
                    ...(payload !== undefined ? { "content-length": Buffer.byteLength(payload) } : {}),
                    ...init.headers,
                },
            },
            (response) => {
                const chunks: Buffer[] = [];
                response.on("data", (chunk: Buffer) => chunks.push(chunk));
                response.on("error", reject);
                response.on("end", () => {
                    const text = Buffer.concat(chunks).toString("utf8");
                    try {
                        resolve({
                            status: response.statusCode ?? 0,
                            headers: response.headers,
                            body: (text ? JSON.parse(text) : undefined) as T,
                            text,
                        });
                    } catch (error) {
                        reject(error);
                    }
                });
            },
        );
        outgoing.on("error", reject);
        outgoing.end(payload);
    });

export const eventually = async <T>(
    probe: () => Promise<T | undefined>,
    { timeoutMs = 60_000, intervalMs = 250 } = {},
): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const value = await probe();
        if (value !== undefined) {
            return value;
        }
        if (Date.now() > deadline) {
            throw new Error(`condition not met within ${timeoutMs} ms`);
        }
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
};
