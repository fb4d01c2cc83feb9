export interface JsonResponse<T = unknown> {
    status: number;
    body: T;
    text: string;
}

const isConnectionReset = (error: unknown): boolean =>
    error instanceof Error && (error.cause as { code?: string } | undefined)?.code === "ECONNRESET";

/**
 * A request over real HTTP, answered as parsed JSON where there is a body. A GET is sent again when
 * the server reset a kept-alive connection: core-api destroys every socket after its response.
 */
export const requestJson = async <T = Record<string, unknown>>(
    url: string,
    init: { method?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
    retries = 2,
): Promise<JsonResponse<T>> => {
    try {
        return await send<T>(url, init);
    } catch (error) {
        if ((init.method ?? "GET") === "GET" && retries > 0 && isConnectionReset(error)) {
            return requestJson<T>(url, init, retries - 1);
        }
        throw error;
    }
};

const send = async <T>(
    url: string,
    init: { method?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string },
): Promise<JsonResponse<T>> => {
    const response = await fetch(url, {
        method: init.method ?? "GET",
        headers: { ...(init.body !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
        body: init.rawBody ?? (init.body !== undefined ? JSON.stringify(init.body) : undefined),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T, text };
};

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
