import { execFile } from "child_process";
import { mkdtempSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { promisify } from "util";

const ROOT = join(__dirname, "..", "..");

describe("the plugin's threads", () => {
    let folder: string;

    beforeEach(() => {
        // A compiled thread script, as the published package has, that tells what options it runs with.
        folder = mkdtempSync(join(tmpdir(), "cww-thread-options-"));
        writeFileSync(
            join(folder, "exec-argv-thread.js"),
            'require("worker_threads").parentPort.postMessage(process.execArgv);\n',
        );
    });

    afterEach(() => rmSync(folder, { recursive: true, force: true }));

    it("run a compiled thread script without the node's own options (a --require of its process)", async () => {
        // A process started as the benchmarks' hosts are (ts-node preloaded) starts the thread.
        const starter = `
            const { spawnWorker } = require(${JSON.stringify(join(ROOT, "src", "worker", "spawn"))});
            const worker = spawnWorker("exec-argv-thread", undefined, ${JSON.stringify(folder)});
            worker.once("message", (execArgv) => {
                console.log(JSON.stringify({ process: process.execArgv, thread: execArgv }));
                void worker.terminate();
            });`;
        const { stdout } = await promisify(execFile)(
            process.execPath,
            ["--require", "ts-node/register/transpile-only", "--eval", starter],
            { cwd: ROOT },
        );
        const seen = JSON.parse(stdout) as { process: string[]; thread: string[] };
        expect(seen.process.slice(0, 2)).toEqual(["--require", "ts-node/register/transpile-only"]);
        expect(seen.thread).toEqual([]);
    });
});
