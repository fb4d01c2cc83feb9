export interface JsonResponse<T = unknown> {
    status: number;
    body: T;
    text: string;
}

/** A request over real HTTP, answered as parsed JSON where there is a body. */
export const requestJson = async <T = Record<string, unknown>>(
    url: string,
    init: { method?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
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
