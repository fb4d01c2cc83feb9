import { existsSync, readdirSync, readFileSync, statSync } from "fs";
import { dirname, join, normalize, relative, sep } from "path";

/** Which rooms of src/ each room may import; docs/architecture.md draws the same map. */
const ALLOWED: Record<string, readonly string[]> = {
    contracts: [],
    identifiers: [],
    logging: [],
    net: [],
    worker: [],
    config: ["net"],
    defaults: ["config"],
    store: ["contracts", "logging", "worker"],
    events: ["contracts", "store"],
    webhooks: ["contracts", "events", "store"],
    cluster: ["contracts", "store", "webhooks"],
    delivery: ["contracts", "events", "net", "store"],
    engine: ["cluster", "config", "contracts", "delivery", "events", "logging", "store", "worker"],
    http: ["contracts", "events", "net", "webhooks"],
    wallets: ["http", "identifiers", "worker"],
    plugin: [
        "cluster",
        "config",
        "contracts",
        "delivery",
        "engine",
        "events",
        "http",
        "logging",
        "store",
        "wallets",
        "webhooks",
    ],
    "service-provider": ["config", "events", "identifiers", "plugin", "wallets"],
    index: ["contracts", "defaults", "identifiers", "service-provider", "store", "webhooks"],
};

const SRC = join(__dirname, "../../src");

const sourceFiles = (folder: string): string[] =>
    readdirSync(folder).flatMap((name) => {
        const path = join(folder, name);
        return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
    });

const roomOf = (file: string): string => relative(SRC, file).split(sep)[0].replace(/\.ts$/, "");

const importsOf = (file: string): string[] =>
    [...readFileSync(file, "utf8").matchAll(/from "(\.[^"]+)"/g)].map(([, specifier]) => {
        const target = normalize(join(dirname(file), specifier));
        return existsSync(`${target}.ts`) ? `${target}.ts` : join(target, "index.ts");
    });

describe("the rooms of src/", () => {
    const files = sourceFiles(SRC);
    const graph = new Map(files.map((file) => [file, importsOf(file)]));

    it("import only the rooms the map allows, so every arrow runs one way", () => {
        const wrong = files.flatMap((file) =>
            (graph.get(file) ?? [])
                .filter((target) => roomOf(target) !== roomOf(file))
                .filter((target) => !(ALLOWED[roomOf(file)] ?? []).includes(roomOf(target)))
                .map((target) => `${relative(SRC, file)} -> ${relative(SRC, target)}`),
        );

        expect(Object.keys(ALLOWED)).toEqual(expect.arrayContaining([...new Set(files.map(roomOf))]));
        expect(wrong).toEqual([]);
    });

    it("have no import cycle, between files either", () => {
        const state = new Map<string, "open" | "done">();
        const cycles: string[] = [];
        const visit = (file: string, path: string[]): void => {
            state.set(file, "open");
            for (const target of graph.get(file) ?? []) {
                if (state.get(target) === "open") {
                    cycles.push(
                        [...path.slice(path.indexOf(target)), target].map((f) => relative(SRC, f)).join(" -> "),
                    );
                } else if (!state.has(target)) {
                    visit(target, [...path, target]);
                }
            }
            state.set(file, "done");
        };
        files.forEach((file) => state.has(file) || visit(file, [file]));

        expect(cycles).toEqual([]);
    });
});
