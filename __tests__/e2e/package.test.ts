import { execFileSync } from "child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";

import { devDependencies, version } from "../../package.json";

const ROOT = resolve(__dirname, "../..");

const run = (command: string, args: string[], cwd: string): string =>
    execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 300_000 });

/** tsc's error lines, each "file(line,col): error TSxxxx: …". */
const typeErrors = (cwd: string, skipLibCheck: boolean): string[] => {
    writeFileSync(
        join(cwd, "tsconfig.json"),
        JSON.stringify({
            compilerOptions: {
                strict: true,
                skipLibCheck,
                module: "node16",
                moduleResolution: "node16",
                target: "ES2022",
                noEmit: true,
                types: ["node"],
            },
            include: ["index.ts"],
        }),
    );
    try {
        run(join(cwd, "node_modules/.bin/tsc"), ["-p", "."], cwd);
        return [];
    } catch (error) {
        return String((error as { stdout?: string }).stdout)
            .split("\n")
            .filter((line) => /error TS\d+/.test(line));
    }
};

const walk = (folder: string): string[] =>
    readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? walk(join(folder, entry.name)) : [join(folder, entry.name)],
    );

describe("the published package, installed into a TypeScript project", () => {
    const scratch = mkdtempSync(join(tmpdir(), "cww-package-"));
    let unpacked: string;
    let tarball: string;

    beforeAll(() => {
        const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", scratch], ROOT)) as Array<{
            filename: string;
        }>;
        tarball = join(scratch, packed[0].filename);
        unpacked = join(scratch, "unpacked");
        mkdirSync(unpacked);
        run("tar", ["xzf", tarball, "-C", unpacked], scratch);
    });

    afterAll(() => {
        rmSync(scratch, { recursive: true, force: true });
    });

    it("ships its licence, and source maps that carry their own sources", () => {
        const files = walk(join(unpacked, "package")).map((file) => file.slice(join(unpacked, "package").length + 1));
        expect(files).toEqual(expect.arrayContaining(["LICENSE", "README.md", "package.json", "dist/index.js"]));
        expect(files.filter((file) => file.startsWith("src/"))).toEqual([]);
        // Nothing left over from an earlier build: every module shipped has its source here.
        const modules = files.filter((file) => file.startsWith("dist/") && file.endsWith(".js"));
        expect(
            modules.filter((file) => !existsSync(join(ROOT, file.replace(/^dist/, "src").replace(/\.js$/, ".ts")))),
        ).toEqual([]);
        const maps = files.filter((file) => file.endsWith(".js.map"));
        expect(maps.length).toBeGreaterThan(10);
        for (const map of maps) {
            const parsed = JSON.parse(readFileSync(join(unpacked, "package", map), "utf8")) as {
                sources: string[];
                sourcesContent?: string[];
            };
            expect(parsed.sourcesContent?.length).toBe(parsed.sources.length);
        }
    });

    it("starts its threads with none of the node's own options (a --require of the node's process), at any niceness", () => {
        // A node started with a preload (an agent); a thread script that tells what options it runs with.
        const folder = join(scratch, "threads");
        mkdirSync(folder);
        writeFileSync(join(folder, "preload.js"), "globalThis.preloaded = true;\n");
        writeFileSync(
            join(folder, "exec-argv-thread.js"),
            'require("worker_threads").parentPort.postMessage(process.execArgv);\n',
        );
        const spawn = join(unpacked, "package", "dist", "worker", "spawn.js");
        const threadOptions = (niceness: number): { process: string[]; thread: string[] } => {
            const starter = `
                const worker = require(${JSON.stringify(spawn)}).spawnWorker("exec-argv-thread", undefined, ${JSON.stringify(folder)}, ${niceness});
                worker.once("message", (execArgv) => {
                    console.log(JSON.stringify({ process: process.execArgv, thread: execArgv }));
                    void worker.terminate();
                });`;
            return JSON.parse(
                run(process.execPath, ["--require", join(folder, "preload.js"), "--eval", starter], folder),
            ) as { process: string[]; thread: string[] };
        };
        // Niceness 0 starts the thread's script itself; the default (10) starts it from the lowering code.
        for (const niceness of [0, 10]) {
            const seen = threadOptions(niceness);
            expect(seen.process.slice(0, 2)).toEqual(["--require", join(folder, "preload.js")]);
            expect(seen.thread).toEqual([]);
        }
    });

    it("compiles an import of it with nothing but its own dependencies, library checks on", () => {
        const consumer = join(scratch, "consumer");
        mkdirSync(consumer);
        writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true }));
        writeFileSync(
            join(consumer, "index.ts"),
            [
                'import { defaults, ServiceProvider } from "core-wallet-webhooks";',
                "",
                "export const plugin: typeof ServiceProvider = ServiceProvider;",
                "export const port = defaults.server.http.port;",
                "",
            ].join("\n"),
        );
        run(
            "npm",
            [
                "install",
                "--prefer-offline",
                "--no-audit",
                "--no-fund",
                "--ignore-scripts",
                tarball,
                `typescript@${devDependencies.typescript}`,
                `@types/node@${devDependencies["@types/node"]}`,
            ],
            consumer,
        );
        expect(
            JSON.parse(readFileSync(join(consumer, "node_modules/core-wallet-webhooks/package.json"), "utf8")).version,
        ).toBe(version);

        expect(typeErrors(consumer, true)).toEqual([]);
        // With library checks on, ARK Core 3.9.1's own declarations fail (core-kernel's ipc
        // helpers, its missing @types/cron, type-fest); nothing of ours may, and nothing we import.
        const errors = typeErrors(consumer, false);
        const ours = errors.filter(
            (line) => !line.startsWith("node_modules/@arkecosystem/") && !line.startsWith("node_modules/type-fest/"),
        );
        expect(ours).toEqual([]);
    });
});
