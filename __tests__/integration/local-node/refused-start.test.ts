import { spawnSync } from "child_process";
import { mkdtempSync, readdirSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";

const ROOT = resolve(__dirname, "../../..");

/** `npm start`'s program with one bad variable: it must stop before anything starts, in one line. */
const startWith = (environment: Record<string, string>): { status: number | null; output: string; dataDir: string } => {
    const dataDir = mkdtempSync(join(tmpdir(), "cww-refused-start-"));
    const result = spawnSync(process.execPath, ["-r", "ts-node/register/transpile-only", "local-node/main.ts"], {
        cwd: ROOT,
        env: { ...process.env, LOCAL_NODE_DATA_DIR: dataDir, ...environment },
        encoding: "utf8",
        timeout: 60_000,
    });
    return { status: result.status, output: `${result.stdout}${result.stderr}`.trim(), dataDir };
};

describe("a local node start refused for a bad variable", () => {
    it.each([
        [
            { LOCAL_NODE_PLUGIN_OPTIONS: '{"delivery": {' },
            /^The local node could not start: LOCAL_NODE_PLUGIN_OPTIONS is not valid JSON: .+$/,
        ],
        [
            { LOCAL_NODE_PLUGIN_OPTIONS: "[1, 2]" },
            /^The local node could not start: LOCAL_NODE_PLUGIN_OPTIONS must be a JSON object, such as .+$/,
        ],
        [
            { LOCAL_NODE_LOG_LEVEL: "loud" },
            /^The local node could not start: LOCAL_NODE_LOG_LEVEL=loud: choose debug, info, notice, warning or error$/,
        ],
    ])("%p: one line naming the variable, no stack trace, nothing started in the data folder", (environment, line) => {
        const { status, output, dataDir } = startWith(environment);
        try {
            expect(status).toBe(1);
            expect(output.split("\n")).toHaveLength(1);
            expect(output).toMatch(line);
            expect(readdirSync(dataDir)).toEqual([]);
        } finally {
            rmSync(dataDir, { recursive: true, force: true });
        }
    });
});
