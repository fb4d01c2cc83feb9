import { eventually, requestJson } from "../support/http";
import { RunningPlugin, startPlugin } from "../support/plugin-harness";

interface WebhookBody {
    id: string;
    event: string;
    target: string;
    enabled: boolean;
    conditions: unknown[];
    match: string;
    token?: string;
}

interface Envelope {
    meta: Record<string, unknown>;
    data: WebhookBody[];
}

interface ErrorBody {
    statusCode: number;
    error: string;
    message: string;
}

const validBody = {
    event: "transaction.applied",
    target: "https://receiver.example/hook",
    conditions: [{ key: "amount", condition: "gte", value: "1000" }],
};

describe("webhook register over HTTP", () => {
    let running: RunningPlugin;
    let url: string;

    beforeEach(async () => {
        running = await startPlugin();
        url = running.url;
    });

    afterEach(async () => {
        await running.stop();
    });

    const create = (body: unknown = validBody) =>
        requestJson<{ data: WebhookBody }>(`${url}/webhooks`, { method: "POST", body });
    const count = (): number => running.plugin.register.page(1, 1).totalCount;

    it("creates a webhook: 201, a UUID, a 64-hex token, enabled by default", async () => {
        const response = await create();

        expect(response.status).toBe(201);
        expect(response.body.data).toEqual({
            id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
            event: "transaction.applied",
            target: "https://receiver.example/hook",
            enabled: true,
            conditions: validBody.conditions,
            match: "any",
            token: expect.stringMatching(/^[0-9a-f]{64}$/),
        });
    });

    it("accepts enabled as the strings 'true' and 'false' and answers booleans", async () => {
        const off = await create({ ...validBody, enabled: "false" });
        const on = await create({ ...validBody, enabled: "true" });

        expect(off.body.data.enabled).toBe(false);
        expect(on.body.data.enabled).toBe(true);
        const shown = await requestJson<{ data: WebhookBody }>(`${url}/webhooks/${off.body.data.id}`);
        expect(shown.body.data.enabled).toBe(false);
    });

    it("keeps a value given with truthy or falsy as sent, as ARK's plugin accepts it, and matches without it", async () => {
        const conditions = [
            { key: "vendorField", condition: "truthy", value: "yes" },
            { key: "amount", condition: "falsy", value: { any: ["shape", 1] } },
            { key: "fee", condition: "truthy" },
        ];
        const response = await create({ ...validBody, event: "block.applied", conditions, match: "all" });
        expect(response.status).toBe(201);
        const read = await requestJson<{ data: WebhookBody }>(`${url}/webhooks/${response.body.data.id}`);
        expect(read.body.data.conditions).toEqual(conditions);

        running.plugin.listener.handle({
            name: "block.applied",
            data: { vendorField: "true", amount: "false", fee: true },
        });
        running.plugin.listener.handle({
            name: "block.applied",
            data: { vendorField: "yes", amount: "false", fee: true },
        });
        running.plugin.listener.handle({ name: "block.applied", data: { vendorField: "TRUE", amount: "", fee: true } });
        const hookUrl = `${url}/webhooks/${response.body.data.id}/deliveries`;
        const listed = await eventually(async () => {
            const deliveries = await requestJson<{ data: Array<{ id: string }> }>(hookUrl);
            return deliveries.body.data.length === 2 ? deliveries.body.data : undefined;
        });
        const vendorFields: string[] = [];
        for (const { id } of listed) {
            const shown = await requestJson<{ data: { body: { data: { vendorField: string } } } }>(`${hookUrl}/${id}`);
            vendorFields.push(shown.body.data.body.data.vendorField);
        }
        vendorFields.sort();
        expect(vendorFields).toEqual(["TRUE", "true"]);
    });

    it("retrieves a webhook without its token", async () => {
        const { body } = await create();

        const response = await requestJson<{ data: WebhookBody }>(`${url}/webhooks/${body.data.id}`);

        expect(response.status).toBe(200);
        expect(response.body.data.id).toBe(body.data.id);
        expect(response.body.data).not.toHaveProperty("token");
    });

    it("lists webhooks in the spec's pagination envelope, links with the request's prefix", async () => {
        for (let index = 0; index < 5; index++) {
            await create({ ...validBody, target: `https://receiver.example/${index}` });
        }

        const v2 = await requestJson<Envelope>(`${url}/v2/webhooks?page=2&limit=2`);
        const plain = await requestJson<Envelope>(`${url}/webhooks?page=1&limit=2`);

        expect(v2.status).toBe(200);
        expect(v2.body.meta).toEqual({
            count: 2,
            pageCount: 3,
            totalCount: 5,
            next: "/api/v2/webhooks?page=3&limit=2",
            previous: "/api/v2/webhooks?page=1&limit=2",
            self: "/api/v2/webhooks?page=2&limit=2",
            first: "/api/v2/webhooks?page=1&limit=2",
            last: "/api/v2/webhooks?page=3&limit=2",
        });
        expect(v2.body.data.map((webhook) => webhook.target)).toEqual([
            "https://receiver.example/2",
            "https://receiver.example/3",
        ]);
        expect(v2.body.data.every((webhook) => !("token" in webhook))).toBe(true);
        expect(plain.body.meta.self).toBe("/api/webhooks?page=1&limit=2");
        expect(plain.body.meta.previous).toBeNull();
    });

    it("defaults to page 1 and a limit of 100", async () => {
        await create();

        const response = await requestJson<Envelope>(`${url}/webhooks`);

        expect(response.body.meta.self).toBe("/api/webhooks?page=1&limit=100");
        expect(response.body.meta.next).toBeNull();
    });

    it("updates with PUT and PATCH, partially, answering 204 and keeping the token", async () => {
        const { body } = await create();
        const id = body.data.id;

        const put = await requestJson(`${url}/webhooks/${id}`, { method: "PUT", body: { enabled: false } });
        const patch = await requestJson(`${url}/webhooks/${id}`, {
            method: "PATCH",
            body: { target: "http://other.example/x", conditions: [] },
        });

        expect(put.status).toBe(204);
        expect(put.text).toBe("");
        expect(patch.status).toBe(204);
        const shown = await requestJson<{ data: WebhookBody }>(`${url}/webhooks/${id}`);
        expect(shown.body.data).toMatchObject({
            event: "transaction.applied",
            target: "http://other.example/x",
            enabled: false,
            conditions: [],
        });
        expect(running.plugin.register.find(id)?.token).toBe(body.data.token);
    });

    it("deletes with 204, after which the webhook is gone", async () => {
        const { body } = await create();

        const removed = await requestJson(`${url}/webhooks/${body.data.id}`, { method: "DELETE" });
        const after = await requestJson<ErrorBody>(`${url}/webhooks/${body.data.id}`);

        expect(removed.status).toBe(204);
        expect(removed.text).toBe("");
        expect(after.status).toBe(404);
        expect(count()).toBe(0);
    });

    it("lists the event catalogue, the spec's names and the kernel's wallet.unvote", async () => {
        const response = await requestJson<{ data: Array<{ name: string; description: string }> }>(
            `${url}/webhooks/events`,
        );

        const names = response.body.data.map((entry) => entry.name);
        expect(response.status).toBe(200);
        expect(names).toEqual(
            expect.arrayContaining(["block.applied", "wallet.vote", "wallet.unvote", "queue.failed"]),
        );
        expect(response.body.data.every((entry) => entry.description.length > 0)).toBe(true);
    });

    it("says why an event the node dispatches cannot be subscribed to, in the catalogue and in a 422", async () => {
        const catalogue = await requestJson<{
            data: Array<{ name: string; emitted: boolean }>;
            meta: { excluded: Array<{ name: string; reason: string }> };
        }>(`${url}/webhooks/events`);
        expect(catalogue.body.meta.excluded.map((entry) => entry.name)).toContain("wallet.property.set");
        expect(catalogue.body.data.find((entry) => entry.name === "forger.started")?.emitted).toBe(true);

        const refused = await requestJson<ErrorBody>(`${url}/webhooks`, {
            method: "POST",
            body: { ...validBody, event: "wallet.property.set" },
        });
        expect(refused.status).toBe(422);
        expect(refused.body.message).toMatch(
            /"event" wallet\.property\.set cannot be subscribed to: the node dispatches it for every attribute/,
        );
        expect(count()).toBe(0);
    });

    it.each([
        ["GET", ""],
        ["PUT", ""],
        ["PATCH", ""],
        ["DELETE", ""],
        ["GET", "/deliveries"],
        ["POST", "/ping"],
    ])("answers 404 naming the id for an unknown webhook on %s %s", async (method, suffix) => {
        const response = await requestJson<ErrorBody>(`${url}/webhooks/00000000-0000-4000-8000-000000000000${suffix}`, {
            method,
            body: method === "PUT" || method === "PATCH" ? { enabled: true } : undefined,
        });

        expect(response.status).toBe(404);
        expect(response.body).toEqual({
            statusCode: 404,
            error: "Not Found",
            message: "webhook 00000000-0000-4000-8000-000000000000 was not found",
        });
    });

    describe("refuses bad input with a 4xx naming the field, and changes nothing", () => {
        const tooManyConditions = Array.from({ length: 51 }, () => ({ key: "amount", condition: "truthy" }));
        const cases: Array<
            [string, { body?: unknown; rawBody?: string; headers?: Record<string, string> }, number, RegExp]
        > = [
            [
                "invalid JSON",
                { rawBody: '{"event": ', headers: { "content-type": "application/json" } },
                400,
                /Invalid request payload JSON format/,
            ],
            [
                "an empty body",
                { rawBody: "", headers: { "content-type": "application/json" } },
                422,
                /"body" must be of type object/,
            ],
            ["a body that is not an object", { body: [1, 2] }, 422, /"body" must be of type object/],
            ["no event", { body: { ...validBody, event: undefined } }, 422, /"event" is required/],
            ["no target", { body: { ...validBody, target: undefined } }, 422, /"target" is required/],
            ["no conditions", { body: { ...validBody, conditions: undefined } }, 422, /"conditions" is required/],
            ["an event of the wrong type", { body: { ...validBody, event: 42 } }, 422, /"event" must be a string/],
            [
                "conditions that are not an array",
                { body: { ...validBody, conditions: "amount>1" } },
                422,
                /"conditions" must be an array/,
            ],
            [
                "enabled that is not a boolean",
                { body: { ...validBody, enabled: "maybe" } },
                422,
                /"enabled" must be a boolean/,
            ],
            [
                "an unknown event",
                { body: { ...validBody, event: "block.exploded" } },
                422,
                /"event" must be one of the events listed by GET \/api\/webhooks\/events: .*block\.applied/,
            ],
            [
                "an unknown condition",
                { body: { ...validBody, conditions: [{ key: "a", condition: "approx", value: 1 }] } },
                422,
                /"conditions\[0\]\.condition" must be one of \[between/,
            ],
            [
                "a condition without key",
                { body: { ...validBody, conditions: [{ condition: "eq", value: 1 }] } },
                422,
                /"conditions\[0\]\.key" is required/,
            ],
            [
                "eq without value",
                { body: { ...validBody, conditions: [{ key: "a", condition: "eq" }] } },
                422,
                /"conditions\[0\]\.value" is required/,
            ],
            [
                "between without min",
                { body: { ...validBody, conditions: [{ key: "a", condition: "between", value: { max: 5 } }] } },
                422,
                /"conditions\[0\]\.value\.min" is required/,
            ],
            [
                "not-between without max",
                { body: { ...validBody, conditions: [{ key: "a", condition: "not-between", value: { min: 5 } }] } },
                422,
                /"conditions\[0\]\.value\.max" is required/,
            ],
            [
                "between with a number as value",
                { body: { ...validBody, conditions: [{ key: "a", condition: "between", value: 5 }] } },
                422,
                /"conditions\[0\]\.value" must be of type object/,
            ],
            [
                "gt with a word",
                { body: { ...validBody, conditions: [{ key: "a", condition: "gt", value: "ten" }] } },
                422,
                /"conditions\[0\]\.value" must be a number, or a string of digits/,
            ],
            [
                "a bound beyond 2^53 as a JSON number",
                {
                    rawBody: `{"event":"block.applied","target":"http://a.example","conditions":[{"key":"a","condition":"gt","value":18446744073709551617}]}`,
                    headers: { "content-type": "application/json" },
                },
                422,
                /"conditions\[0\]\.value" .*2\^53/,
            ],
            [
                "an invalid regexp",
                { body: { ...validBody, conditions: [{ key: "a", condition: "regexp", value: "(unclosed" }] } },
                422,
                /"conditions\[0\]\.value" is not a safe regular expression/,
            ],
            [
                "an unsafe regexp (backreference)",
                { body: { ...validBody, conditions: [{ key: "a", condition: "regexp", value: "(a+)\\1" }] } },
                422,
                /"conditions\[0\]\.value" is not a safe regular expression.*backreferences/,
            ],
            [
                "an unsafe regexp (lookahead)",
                { body: { ...validBody, conditions: [{ key: "a", condition: "regexp", value: "(?=a)a" }] } },
                422,
                /"conditions\[0\]\.value" is not a safe regular expression/,
            ],
            [
                "a regexp over 256 characters",
                { body: { ...validBody, conditions: [{ key: "a", condition: "regexp", value: "a".repeat(257) }] } },
                422,
                /"conditions\[0\]\.value" length must be less than or equal to 256/,
            ],
            [
                "a target that is not a URL",
                { body: { ...validBody, target: "not a url" } },
                422,
                /"target" is not a valid URL/,
            ],
            [
                "an ftp target",
                { body: { ...validBody, target: "ftp://files.example/x" } },
                422,
                /"target" must be an http or https URL/,
            ],
            [
                "a javascript: target",
                { body: { ...validBody, target: "javascript:alert(1)" } },
                422,
                /"target" must be an http or https URL/,
            ],
            ["an unknown field", { body: { ...validBody, token: "mine" } }, 422, /"token" is not allowed/],
            [
                "an unknown match mode",
                { body: { ...validBody, match: "most" } },
                422,
                /"match" must be one of \[any, all\]/,
            ],
            [
                "too many conditions",
                { body: { ...validBody, conditions: tooManyConditions } },
                422,
                /"conditions" must contain less than or equal to 50 items/,
            ],
            [
                "a body over 64 KiB",
                { body: { ...validBody, target: `https://a.example/${"x".repeat(70_000)}` } },
                413,
                /Payload content length greater than maximum allowed: 65536/,
            ],
            [
                "a text/plain body",
                { rawBody: "event=block.applied", headers: { "content-type": "text/plain" } },
                415,
                /Unsupported Media Type/,
            ],
        ];

        it.each(cases)("on create: %s", async (_name, request, status, message) => {
            const before = count();

            const response = await requestJson<ErrorBody>(`${url}/webhooks`, { method: "POST", ...request });

            expect(response.status).toBe(status);
            expect(response.body.statusCode).toBe(status);
            expect(response.body.message).toMatch(message);
            expect(response.text).not.toMatch(/at .*\.(ts|js):\d+/);
            expect(count()).toBe(before);
        });

        it.each([
            ["an unknown event", { event: "nope" }, /"event" must be one of/],
            ["a non-http target", { target: "file:///etc/passwd" }, /"target" must be an http or https URL/],
            [
                "an unsafe regexp",
                { conditions: [{ key: "a", condition: "regexp", value: "(x)\\1" }] },
                /not a safe regular expression/,
            ],
            ["enabled as a number", { enabled: 3 }, /"enabled" must be a boolean/],
            ["the token", { token: "f".repeat(64) }, /"token" is not allowed/],
        ])("on update: %s", async (_name, body, message) => {
            const { body: created } = await create();
            const before = running.plugin.register.find(created.data.id);

            const response = await requestJson<ErrorBody>(`${url}/webhooks/${created.data.id}`, {
                method: "PATCH",
                body,
            });

            expect(response.status).toBe(422);
            expect(response.body.message).toMatch(message);
            expect(running.plugin.register.find(created.data.id)).toEqual(before);
        });

        it.each([
            ["page=0", /"page" must be greater than or equal to 1/],
            ["limit=1000", /"limit" must be less than or equal to 100/],
            ["limit=0", /"limit" must be greater than or equal to 1/],
            ["page=abc", /"page" must be a number/],
            ["page=1.5", /"page" must be an integer/],
        ])("on list: %s", async (query, message) => {
            const response = await requestJson<ErrorBody>(`${url}/webhooks?${query}`);

            expect(response.status).toBe(422);
            expect(response.body.message).toMatch(message);
        });
    });
});

describe("access to the HTTP service", () => {
    it("refuses a caller outside server.whitelist with 403", async () => {
        const running = await startPlugin({ server: { whitelist: ["10.0.0.0/8", "192.168.*"] } });
        try {
            const response = await requestJson<ErrorBody>(`${running.url}/webhooks`);

            expect(response.status).toBe(403);
            expect(response.body.message).toMatch(/is not in the server\.whitelist/);
        } finally {
            await running.stop();
        }
    });

    it("admits a caller matched by a CIDR range", async () => {
        const running = await startPlugin({ server: { whitelist: ["127.0.0.0/8"] } });
        try {
            expect((await requestJson(`${running.url}/webhooks`)).status).toBe(200);
        } finally {
            await running.stop();
        }
    });

    it("requires the API key as a bearer token when one is set", async () => {
        const running = await startPlugin({ server: { apiKey: "s3cret-key" } });
        try {
            const none = await requestJson<ErrorBody>(`${running.url}/webhooks`);
            const wrong = await requestJson(`${running.url}/webhooks`, { headers: { authorization: "Bearer nope" } });
            const right = await requestJson(`${running.url}/webhooks`, {
                headers: { authorization: "Bearer s3cret-key" },
            });

            expect(none.status).toBe(403);
            expect(none.body.message).toMatch(/API key/);
            expect(wrong.status).toBe(403);
            expect(right.status).toBe(200);
        } finally {
            await running.stop();
        }
    });
});
