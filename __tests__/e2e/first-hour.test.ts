import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "fs";
import { createServer } from "net";
import { tmpdir } from "os";
import { join, resolve } from "path";

import { READY_MARKER } from "../../local-node";
import { isAlive } from "../../local-node/processes";
import { requestJson } from "../support/http";
import { freePort } from "../support/ports";
import { Command } from "./support/command";

/**
 * The README's quick start, run exactly as written (its ports swapped for free ones), then the
 * stops and restarts an operator meets in the first hour.
 */
const README = readFileSync(resolve(__dirname, "../../README.md"), "utf8");

const quickStart = (): string[] => {
    const section = README.slice(README.indexOf("### From `npm start` to a verified delivery"));
    const block = /```sh\n([\s\S]*?)```/.exec(section);
    if (!block) {
        throw new Error("the README has no quick start block");
    }
    return block[1].split("\n").filter((line) => line.trim().length > 0);
};

interface Ready {
    pluginUrl: string;
    height: number;
    pid: number;
}

const readyOf = async (start: Command): Promise<Ready> => {
    const ready = JSON.parse(
        (await start.line(new RegExp(`^${READY_MARKER} `), 240_000)).slice(READY_MARKER.length + 1),
    );
    nodePids.push(ready.pid);
    return ready;
};

const canListen = (port: number): Promise<boolean> =>
    new Promise((done) => {
        const server = createServer();
        server.once("error", () => done(false));
        server.listen(port, "127.0.0.1", () => server.close(() => done(true)));
    });

const commandLine = (pid: number): string => {
    try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
        return "";
    }
};

/** The PostgreSQL whose command line names the data folder, and every node process started here. */
const nodePids: number[] = [];
const processesOf = (dataDir: string): number[] => [
    ...readdirSync("/proc")
        .filter((name) => /^\d+$/.test(name))
        .map(Number)
        .filter((pid) => pid !== process.pid && commandLine(pid).includes(dataDir)),
    ...nodePids.filter(isAlive),
];

/** Lines printed by the node itself (npm's own banner and warnings left out). */
const nodeLines = (output: string): string[] =>
    output
        .split("\n")
        .filter((line) => line.trim().length > 0 && !line.startsWith(">") && !line.startsWith("npm warn"));

describe("an operator's first hour, on a real local node", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cww-first-hour-"));
    const ports: Record<string, number> = {};
    let env: Record<string, string>;
    const running: Command[] = [];

    const run = (commandLine: string, extra: Record<string, string> = {}): Command => {
        const command = new Command(commandLine, { ...env, ...extra });
        running.push(command);
        return command;
    };

    /** A README command with its ports replaced by this test's. */
    const localised = (line: string): string =>
        line.replace(/4004/g, String(ports.plugin)).replace(/4005/g, String(ports.receiver));

    beforeAll(async () => {
        for (const name of ["postgres", "p2p", "api", "plugin", "receiver"]) {
            ports[name] = await freePort();
        }
        env = {
            LOCAL_NODE_DATA_DIR: dataDir,
            LOCAL_NODE_QUIET: "1",
            LOCAL_NODE_POSTGRES_PORT: String(ports.postgres),
            LOCAL_NODE_P2P_PORT: String(ports.p2p),
            LOCAL_NODE_API_PORT: String(ports.api),
            LOCAL_NODE_PLUGIN_PORT: String(ports.plugin),
        };
    });

    afterAll(async () => {
        for (const command of running) {
            command.child.kill("SIGKILL");
        }
        for (const pid of processesOf(dataDir)) {
            process.kill(pid, "SIGKILL");
        }
        rmSync(dataDir, { recursive: true, force: true });
    });

    const expectAllStopped = async (): Promise<void> => {
        expect(processesOf(dataDir)).toEqual([]);
        for (const port of [ports.postgres, ports.p2p, ports.api, ports.plugin]) {
            expect(await canListen(port)).toBe(true);
        }
    };

    let webhookId: string;
    let heightAtFirstStop: number;

    it("walks from npm start to a verified delivery with the README's commands, quietly", async () => {
        const [start, curl, receiver, send] = quickStart();
        expect([start, receiver, send]).toEqual([
            "npm start",
            'npm run receiver -- --port 4005 --token <the "token" of curl\'s answer>',
            "npm run send -- transfer 2",
        ]);
        const startedAt = Date.now();
        const node = run(start);
        await readyOf(node);

        const curlParts = /^curl -s -X POST (\S+) -H '([^:]+): ([^']+)' -d '([^']+)'$/.exec(localised(curl));
        expect(curlParts).not.toBeNull();
        const [, url, headerName, headerValue, body] = curlParts as RegExpExecArray;
        const created = await fetch(url, { method: "POST", headers: { [headerName]: headerValue }, body });
        expect(created.status).toBe(201);
        const { data } = (await created.json()) as { data: { id: string; token: string } };
        webhookId = data.id;

        const receiving = run(localised(receiver).replace(/<the "token" of curl's answer>/, data.token));
        await receiving.line(/receiving deliveries at/, 30_000);
        const sending = run(send);
        expect((await sending.exit(90_000)).code).toBe(0);
        expect(sending.output).toMatch(/transfer 2 ARK to \w+: in block \d+/);
        const delivered = await receiving.line(
            /transaction\.applied\s+webhook-id \S+\s+attempt 1\s+signature verified/,
            30_000,
        );
        console.log(`first verified delivery ${Date.now() - startedAt} ms after npm start: ${delivered}`);

        // Quiet: the banner and the ready line, nothing from the node's log.
        const printed = nodeLines(node.output);
        expect(printed.join("\n")).not.toMatch(/ERROR|WARNING|FATAL|Warning|multipleResolves/);
        expect(printed.length).toBeLessThanOrEqual(7);
        console.log(`a quiet start printed ${printed.length} lines:\n${printed.join("\n")}`);

        const stopAt = Date.now();
        heightAtFirstStop = (
            await requestJson<{ data: { block: { height: number } } }>(`http://127.0.0.1:${ports.api}/api/blockchain`)
        ).body.data.block.height;
        node.child.kill("SIGTERM");
        const ended = await node.exit(15_000);
        console.log(`SIGTERM to npm: stopped in ${Date.now() - stopAt} ms`);
        expect(ended).toEqual({ code: 0, signal: null });
        expect(node.output).toMatch(/SIGTERM: stopped the node and PostgreSQL in \d+ ms/);
        expect(node.output).not.toMatch(/FATAL|Warning|ERROR/);
        receiving.child.kill("SIGINT");
        expect((await receiving.exit(5_000)).code).toBe(0);
        await expectAllStopped();
    });

    it("restarts on the same chain, with the register and the delivery history, and logs no error", async () => {
        const node = run("npm start", { LOCAL_NODE_QUIET: "" });
        const ready = await readyOf(node);
        // The node's log at info, through a forged block: the offline checks answered locally, no peer rejected.
        await node.line(/Forged new block/, 30_000);
        await node.line(/Broadcasting block \d+ to 0 peers/, 30_000);
        expect(node.output).not.toMatch(/ERROR|FATAL|Rejected 127\.0\.0\.1|ENOTFOUND/);
        expect(node.output).toContain("NTP check answered by this machine's clock");
        console.log(`restart: chain at height ${ready.height} (stopped at ${heightAtFirstStop})`);
        expect(ready.height).toBeGreaterThanOrEqual(heightAtFirstStop);
        const webhooks = await requestJson<{ data: Array<{ id: string }> }>(`${ready.pluginUrl}/webhooks`);
        expect(webhooks.body.data.map((webhook) => webhook.id)).toEqual([webhookId]);
        const deliveries = await requestJson<{ data: Array<{ status: string }> }>(
            `${ready.pluginUrl}/webhooks/${webhookId}/deliveries`,
        );
        expect(deliveries.body.data.some((delivery) => delivery.status === "delivered")).toBe(true);

        // Killed without a chance to stop: PostgreSQL is left running.
        process.kill(ready.pid, "SIGKILL");
        await node.exit(15_000);
        const pidFile = join(dataDir, "postgres", "postmaster.pid");
        const leftover = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
        expect(isAlive(leftover)).toBe(true);

        const again = run("npm start");
        const readyAgain = await readyOf(again);
        expect(again.output).toContain(`stopping the PostgreSQL (pid ${leftover}) an earlier run left running`);
        expect(isAlive(leftover)).toBe(false);
        expect(readyAgain.height).toBeGreaterThanOrEqual(ready.height);

        // npm does not pass SIGHUP on: it dies, and the node stops because its parent is gone.
        again.child.kill("SIGHUP");
        await again.exit(15_000);
        const deadline = Date.now() + 15_000;
        while (processesOf(dataDir).length > 0 && Date.now() < deadline) {
            await new Promise((done) => setTimeout(done, 200));
        }
        await expectAllStopped();
        expect(existsSync(pidFile)).toBe(false);
    });

    const postmasterPid = (): number =>
        Number(readFileSync(join(dataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0]);

    const heightOf = async (): Promise<number> =>
        (await requestJson<{ data: { block: { height: number } } }>(`http://127.0.0.1:${ports.api}/api/blockchain`))
            .body.data.block.height;

    it("refuses a second start on the data folder of a live node with one line naming it, and leaves that node running", async () => {
        const first = run("npm start");
        const ready = await readyOf(first);
        const postgres = postmasterPid();

        const second = run("npm start");
        expect((await second.exit(120_000)).code).toBe(1);
        const printed = nodeLines(second.output).filter((line) => !line.startsWith("npm "));
        expect(printed).toEqual([
            `The local node could not start: ${dataDir} is in use by the local node pid ${ready.pid}: stop it (kill ${ready.pid}) or choose another LOCAL_NODE_DATA_DIR`,
        ]);

        // The first node keeps its PostgreSQL, forges, saves its blocks and answers.
        expect(isAlive(postgres)).toBe(true);
        const height = await heightOf();
        const deadline = Date.now() + 30_000;
        while ((await heightOf()) <= height && Date.now() < deadline) {
            await new Promise((done) => setTimeout(done, 500));
        }
        expect(await heightOf()).toBeGreaterThan(height);
        expect(first.output).not.toMatch(/ERROR|FATAL/);
        expect((await requestJson(`${ready.pluginUrl}/webhooks`)).status).toBe(200);

        first.child.kill("SIGINT");
        expect(await first.exit(15_000)).toEqual({ code: 0, signal: null });
        await expectAllStopped();
    });

    it("ends a stop within its deadline when PostgreSQL hangs, and at once on a second signal, PostgreSQL killed both times", async () => {
        const hung = run("npm start");
        const ready = await readyOf(hung);
        process.kill(postmasterPid(), "SIGSTOP");
        hung.child.kill("SIGTERM");
        // Command.exit kills with SIGKILL at its limit: a code of 1 is the node's own end.
        expect(await hung.exit(15_000)).toEqual({ code: 1, signal: null });
        expect(hung.output).toContain(
            "SIGTERM: the stop did not complete within 11 s: ended the node at once and killed PostgreSQL",
        );
        await expectAllStopped();

        const again = run("npm start");
        const readyAgain = await readyOf(again);
        expect(readyAgain.height).toBeGreaterThanOrEqual(ready.height);
        process.kill(postmasterPid(), "SIGSTOP");
        again.child.kill("SIGINT");
        // Past the window in which Ctrl-C's two copies (the terminal's and npm's) count as one.
        await new Promise((done) => setTimeout(done, 2_000));
        process.kill(readyAgain.pid, "SIGINT");
        expect(await again.exit(5_000)).toEqual({ code: 1, signal: null });
        expect(again.output).toContain("SIGINT during the stop: ended the node at once and killed PostgreSQL");
        await expectAllStopped();
    });

    it("starts a new chain and an empty register with --fresh, and stops on SIGINT without a FATAL line", async () => {
        // At debug, PostgreSQL's own log is printed too: a connection it had to cut would show.
        const node = run("npm start -- --fresh", { LOCAL_NODE_QUIET: "", LOCAL_NODE_LOG_LEVEL: "debug" });
        const ready = await readyOf(node);
        // A new chain: its genesis block, and on a slow start the first block forged before the line.
        expect(ready.height).toBeLessThanOrEqual(2);
        const webhooks = await requestJson<{ data: unknown[] }>(`${ready.pluginUrl}/webhooks`);
        expect(webhooks.body.data).toEqual([]);
        node.child.kill("SIGINT");
        expect(await node.exit(15_000)).toEqual({ code: 0, signal: null });
        expect(node.output).toContain("database system is shut down");
        expect(node.output).not.toMatch(/FATAL|terminating connection|multipleResolves|DeprecationWarning/);
        await expectAllStopped();
    });
});
