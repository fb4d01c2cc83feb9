import { configSchema } from "../../../src/config/schema";
import { resolveOptions, PluginOptions } from "../../../src/config/options";

const loadDefaults = (environment: Record<string, string>): Record<string, unknown> => {
    const saved = { ...process.env };
    Object.assign(process.env, environment);
    try {
        let loaded: Record<string, unknown> = {};
        jest.isolateModules(() => {
            // defaults.ts reads the environment when it loads, as in a node: load it afresh.
            // eslint-disable-next-line @typescript-eslint/no-require-imports
            loaded = require("../../../src/defaults").defaults;
        });
        return loaded;
    } finally {
        process.env = saved;
    }
};

const validate = (config: Record<string, unknown>) => configSchema.validate(config);

const serverOf = (config: Record<string, unknown>) => config.server as Record<string, unknown>;

describe("plugin options", () => {
    it("accepts its own defaults", () => {
        const { error, value } = validate(loadDefaults({}));

        expect(error).toBeUndefined();
        expect(value).toMatchObject({
            enabled: true,
            server: { http: { port: 4004 } },
            delivery: { timeoutMs: 10_000 },
        });
    });

    it("reads every CORE_WALLET_WEBHOOKS_ variable, 'false' meaning false", () => {
        const { value } = validate(
            loadDefaults({
                CORE_WALLET_WEBHOOKS_ENABLED: "false",
                CORE_WALLET_WEBHOOKS_PORT: "5005",
                CORE_WALLET_WEBHOOKS_WHITELIST: "10.0.0.0/8, 192.168.*",
                CORE_WALLET_WEBHOOKS_API_KEY: "key",
                CORE_WALLET_WEBHOOKS_DATABASE_PATH: "/var/hooks.sqlite",
                CORE_WALLET_WEBHOOKS_TIMEOUT: "2500",
                CORE_WALLET_WEBHOOKS_RETRY_SCHEDULE: "1,2,3",
                CORE_WALLET_WEBHOOKS_MAX_PAGE_SIZE: "50",
                CORE_WALLET_WEBHOOKS_STORAGE_DRIVER: "postgres",
                CORE_WALLET_WEBHOOKS_DATABASE_URL: "postgres://relay:secret@db.internal:5432/relays",
                CORE_WALLET_WEBHOOKS_POSTGRES_POOL_SIZE: "8",
                CORE_WALLET_WEBHOOKS_POSTGRES_CONNECTION_TIMEOUT: "2000",
            }),
        );

        expect(value).toMatchObject({
            enabled: false,
            server: { http: { port: 5005 }, whitelist: ["10.0.0.0/8", "192.168.*"], apiKey: "key" },
            storage: {
                path: "/var/hooks.sqlite",
                driver: "postgres",
                postgres: {
                    url: "postgres://relay:secret@db.internal:5432/relays",
                    poolSize: 8,
                    connectionTimeoutMs: 2000,
                },
            },
            delivery: { timeoutMs: 2500, retryScheduleSeconds: [1, 2, 3] },
            limits: { pageSize: 50 },
        });
    });

    it.each([
        [{ CORE_WALLET_WEBHOOKS_PORT: "eighty" }, /"server\.http\.port" must be a number/],
        [{ CORE_WALLET_WEBHOOKS_PORT: "70000" }, /"server\.http\.port" must be less than or equal to 65535/],
        [{ CORE_WALLET_WEBHOOKS_ENABLED: "perhaps" }, /"enabled" must be a boolean/],
        [{ CORE_WALLET_WEBHOOKS_WHITELIST: "10.0.0.0/40" }, /"10\.0\.0\.0\/40" is not a valid CIDR range/],
        [{ CORE_WALLET_WEBHOOKS_DENY_TARGETS: "nowhere" }, /"nowhere" is not a valid IP address/],
        [{ CORE_WALLET_WEBHOOKS_HOST: "my host" }, /"server\.http\.host" must be a valid ip address/],
        [{ CORE_WALLET_WEBHOOKS_CONCURRENCY: "0" }, /"delivery\.concurrency" must be greater than or equal to 1/],
        [{ CORE_WALLET_WEBHOOKS_STORAGE_DRIVER: "mysql" }, /"storage\.driver" must be one of \[sqlite, postgres\]/],
        [
            { CORE_WALLET_WEBHOOKS_STORAGE_DRIVER: "postgres" },
            /"storage\.postgres\.url" is needed with storage\.driver "postgres" \(or CORE_WALLET_WEBHOOKS_DATABASE_URL\)/,
        ],
        [
            { CORE_WALLET_WEBHOOKS_STORAGE_DRIVER: "postgres", CORE_WALLET_WEBHOOKS_DATABASE_URL: "mysql://db/relays" },
            /"storage\.postgres\.url" must be a valid uri with a scheme matching the postgres\|postgresql pattern/,
        ],
    ])("refuses %p naming the option", (environment, message) => {
        expect(validate(loadDefaults(environment)).error?.message).toMatch(message);
    });

    it("takes ARK's timeout option as an alias of delivery.timeoutMs", () => {
        const { value } = validate({ ...loadDefaults({}), timeout: 1500 });

        expect(resolveOptions(value as PluginOptions).delivery.timeoutMs).toBe(1500);
    });

    it("trims server.apiKey from app.json as from the environment variable", () => {
        const fromFile = validate({ ...loadDefaults({}), server: { ...serverOf(loadDefaults({})), apiKey: " key\n" } });
        const fromEnvironment = validate(loadDefaults({ CORE_WALLET_WEBHOOKS_API_KEY: " key\n" }));

        expect(fromFile.value.server.apiKey).toBe("key");
        expect(fromEnvironment.value.server.apiKey).toBe("key");
    });

    it("refuses a server.apiKey of only whitespace, from app.json as from the environment variable, rather than run with no key", () => {
        const message = /"server\.apiKey" is only whitespace, which would mean no key at all/;
        for (const blank of [" ", "\n", " \t "]) {
            const fromFile = validate({
                ...loadDefaults({}),
                server: { ...serverOf(loadDefaults({})), apiKey: blank },
            });
            expect(fromFile.error?.message).toMatch(message);
            expect(validate(loadDefaults({ CORE_WALLET_WEBHOOKS_API_KEY: blank })).error?.message).toMatch(message);
        }
        expect(validate(loadDefaults({ CORE_WALLET_WEBHOOKS_API_KEY: "" })).value.server.apiKey).toBe("");
    });
});
