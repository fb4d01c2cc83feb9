import { spawn } from "child_process";
import { mkdtempSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { IntervalHistogram, monitorEventLoopDelay } from "perf_hooks";

import { Container, Contracts } from "@arkecosystem/core-kernel";
import { Identities, Managers, Utils } from "@arkecosystem/crypto";

import { freePort } from "../__tests__/support/ports";
import { LocalNode, startLocalNode } from "../local-node";
import { formatRow, percentile, startAsker } from "./load";

// A real node, booted as `npm start` boots it (PostgreSQL, forging every 8 s, core-api beside the
// plugin), with extra wallets added to its repository; BENCH_LIVE_WALLETS=100000,1000000 for both.
const SIZES = (process.env.BENCH_LIVE_WALLETS ?? "100000").split(",").map(Number);
// The four listings asked right after each block, in different orders, from a client process.
const LISTINGS = [
    "/wallets?limit=100",
    "/wallets?orderBy=balance:asc&limit=100",
    "/wallets?orderBy=nonce:desc&page=3&limit=50",
    "/wallets?balance.from=50000000000&orderBy=nonce:asc&limit=100",
];
// Blocks per phase; each round is a phase without listings (the floor) then one with them.
const BLOCKS_PER_PHASE = Number(process.env.BENCH_LIVE_BLOCKS ?? 8);
const ROUNDS = Number(process.env.BENCH_LIVE_ROUNDS ?? 2);
const ADD_SLICE = 5_000;
// Balances from a few hundred values, nonces from a few: most wallets tie with many others.
const DISTINCT_BALANCES = 500;

interface Phase {
    /** The longest stall of the node's loop in each block's window, ms. */
    stalls: number[];
    /** Every listing's time, from its request to its body's end, ms. */
    latencies: number[];
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Wallets added as a node's state adds them (findByAddress, then setters), in slices: the node forges meanwhile. */
const addWallets = async (repository: Contracts.State.WalletRepository, count: number): Promise<void> => {
    const version = Managers.configManager.get<number>("network.pubKeyHash");
    for (let index = 0; index < count; index++) {
        const payload = Buffer.alloc(21);
        payload.writeUInt8(version, 0);
        payload.writeUInt32BE(index, 1);
        payload.write("live-wallets", 5);
        const wallet = repository.findByAddress(Identities.Address.fromBuffer(payload));
        wallet.setBalance(Utils.BigNumber.make((index % DISTINCT_BALANCES) * 100_000_000));
        wallet.setNonce(Utils.BigNumber.make(index % 4));
        if (index % ADD_SLICE === ADD_SLICE - 1) {
            await nextTurn();
        }
    }
};

/** Resolves at the node's next block.applied, with its height. */
const nextBlock = (node: LocalNode): Promise<number> =>
    new Promise((resolve) => {
        const events = node.sandbox.app.get<Contracts.Kernel.EventDispatcher>(
            Container.Identifiers.EventDispatcherService,
        );
        const unsubscribe = events.listen("block.applied", {
            handle: () => {
                unsubscribe();
                resolve(node.height());
            },
        });
    });

const runPhase = async (
    node: LocalNode,
    delay: IntervalHistogram,
    ask: ((urls: string[]) => Promise<number[]>) | undefined,
): Promise<Phase> => {
    const phase: Phase = { stalls: [], latencies: [] };
    await nextBlock(node);
    for (let block = 0; block < BLOCKS_PER_PHASE; block++) {
        delay.reset();
        const asked = ask?.(LISTINGS.map((path) => `${node.pluginUrl}${path}`));
        await nextBlock(node);
        phase.stalls.push(delay.max / 1e6);
        phase.latencies.push(...((await asked) ?? []));
    }
    return phase;
};

/** Each listing asked of the plugin and of core-api between two blocks: the paths whose bodies differ. */
const differences = async (node: LocalNode): Promise<string[]> => {
    const differing: string[] = [];
    for (const path of LISTINGS) {
        for (;;) {
            const height = node.height();
            const ours = await (await fetch(`${node.pluginUrl}${path}`)).text();
            const theirs = await (await fetch(`${node.apiUrl}${path}`)).text();
            if (node.height() !== height) {
                continue; // a block came between the two: asked again
            }
            if (ours !== theirs) {
                differing.push(path);
            }
            break;
        }
    }
    return differing;
};

const max = (values: number[]): number => values.reduce((longest, value) => Math.max(longest, value), 0);

export const benchSize = async (size: number): Promise<string[]> => {
    const dataDir = mkdtempSync(join(tmpdir(), "cww-live-wallets-"));
    const node = await startLocalNode({
        dataDir,
        fresh: true,
        postgresPort: await freePort(),
        p2pPort: await freePort(),
        apiPort: await freePort(),
        pluginPort: await freePort(),
        quiet: true,
    });
    const asker = startAsker("process", LISTINGS.length);
    const delay = monitorEventLoopDelay({ resolution: 1 });
    try {
        const repository = node.sandbox.app.getTagged<Contracts.State.WalletRepository>(
            Container.Identifiers.WalletRepository,
            "state",
            "blockchain",
        );
        await addWallets(repository, size);
        // The first listing of each order builds its list (seconds at a million): not a block's work.
        await asker.timeTogether(LISTINGS.map((path) => `${node.pluginUrl}${path}`));
        delay.enable();
        const rows: string[] = [];
        const differing = new Set<string>();
        for (let round = 1; round <= ROUNDS; round++) {
            const floor = await runPhase(node, delay, undefined);
            const listed = await runPhase(node, delay, (urls) => asker.timeTogether(urls));
            (await differences(node)).forEach((path) => differing.add(path));
            const latencies = [...listed.latencies].sort((a, b) => a - b);
            rows.push(
                formatRow([
                    `${size.toLocaleString("en")} wallets, round ${round}`,
                    max(floor.stalls),
                    max(listed.stalls),
                    max(listed.stalls) - max(floor.stalls),
                    percentile(latencies, 0.5),
                    max(latencies),
                ]),
            );
        }
        rows.push(
            formatRow([
                `${size.toLocaleString("en")} wallets: listings differing from core-api's`,
                differing.size === 0 ? "none" : [...differing].join(", "),
                "",
                "",
                "",
                "",
            ]),
        );
        return rows;
    } finally {
        delay.disable();
        await asker.close();
        await node.stop();
        rmSync(dataDir, { recursive: true, force: true });
    }
};

/** The line a child process prints its rows on, as JSON. */
export const ROWS_MARKER = "LIVE_WALLETS_ROWS";

/**
 * One size in a process of its own: a node's kernel, database connections and crypto
 * configuration are the process's, and a second node booted in the same process does not start.
 */
const benchSizeInChild = (size: number): Promise<string[]> =>
    new Promise((resolve, reject) => {
        const child = spawn(
            process.execPath,
            [...process.execArgv, "-r", "ts-node/register/transpile-only", "bench/live-wallets-child.ts", String(size)],
            { stdio: ["ignore", "pipe", "inherit"] },
        );
        let output = "";
        child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.once("exit", (code) => {
            const line = output.split("\n").find((candidate) => candidate.startsWith(ROWS_MARKER));
            if (code === 0 && line) {
                resolve(JSON.parse(line.slice(ROWS_MARKER.length)) as string[]);
            } else {
                reject(new Error(`the live-wallets run at ${size} wallets ended with ${code}:\n${output}`));
            }
        });
    });

/**
 * `npm run bench -- live-wallets`: the node's longest event-loop stall per block with four
 * listings asked right after each block, beside the same blocks without them (the floor), and
 * the listings' times, in a real forging node with core-api beside the plugin.
 */
export const benchLiveWallets = async (): Promise<string[]> => {
    const rows = [
        `Four listings right after each block (${LISTINGS.join(", ")}), ${BLOCKS_PER_PHASE} blocks per phase, from a client process:`,
        "",
        "| | floor: longest stall (ms) | with listings: longest stall (ms) | added (ms) | listing p50 (ms) | slowest listing (ms) |",
        "|---|---|---|---|---|---|",
    ];
    for (const size of SIZES) {
        rows.push(...(await benchSizeInChild(size)));
    }
    return rows;
};
