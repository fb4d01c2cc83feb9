import { AddressInfo } from "net";
import { IntervalHistogram, monitorEventLoopDelay } from "perf_hooks";

import Hapi from "@hapi/hapi";

import { createWalletState } from "../__tests__/support/wallet-state";
import { defaults } from "../src/defaults";
import { createHttpServer } from "../src/http/server";
import { walletRoutesPlugin } from "../src/wallets/wallet-routes";
import { Collections, describeLongest, Promotions } from "./collections";
import { CoreApiHost, startCoreApiHost } from "./core-api-host";
import { ClientHost, formatRow, LoadOptions, LoadResult, percentile, runLoad, startAsker } from "./load";
import { describeHeapFloor, measureHeapFloor } from "./heap-floor";
import { describeStalls, ownStall, Span, StallAnatomy } from "./stall-anatomy";
import { applyBlock as applyBlockTo, WALLETS_PER_BLOCK } from "./wallet-blocks";

// `npm run bench -- wallets` runs 100,000; BENCH_WALLETS=100000,1000000 runs both (a million
// wallets takes about a minute to create and some 3 GB of heap: see the bench script's limit).
const SIZES = (process.env.BENCH_WALLETS ?? "100000").split(",").map(Number);
const QUERIES = [
    "/api/wallets?limit=100",
    "/api/wallets?orderBy=balance:desc&page=50",
    "/api/wallets?orderBy=nonce:asc,address:desc&limit=50",
    "/api/wallets?orderBy=attributes.delegate.voteBalance:desc&limit=20",
    "/api/wallets?balance.from=1000000000000",
];
const BASELINE = "/api/baseline";
// The clients (the load and the asker after blocks) run in a process of their own, as a node's
// clients do; BENCH_WALLETS_CLIENT=thread runs them in threads of this process, as before
// 2026-11-27, where they share the node's address space and V8's helper threads.
const CLIENT_HOST: ClientHost = process.env.BENCH_WALLETS_CLIENT === "thread" ? "thread" : "process";
const LOAD: LoadOptions = { concurrency: 4, maxRequests: 100_000, maxMs: 10_000, host: CLIENT_HOST };
const BLOCK_TIME_MS = 8_000;
// core-api's routes run in a process of their own (see core-api-host.ts) unless this says otherwise.
const CORE_API_IN_SAME_PROCESS = process.env.BENCH_WALLETS_CORE_API === "same-process";
// The first request after a block, measured twice. Before the load windows, as this bench always
// has: 30 blocks, fetch on the node's thread. After them: 100 blocks from a client of its own, since
// a p99 of 150 requests is their second slowest (as unsteady as a maximum), and a client on the
// node's thread costs that thread its own work and garbage (fetch, gzip both ways), as no client
// in another process does. Run before the windows, the longer series was followed by a first
// window with a 28-68 ms stall in three runs of four at a million (before it: once in four).
const BLOCKS_MEASURED = 30;
const BLOCKS_MEASURED_FROM_CLIENT = 100;
// BENCH_WALLETS_REPEAT=n: after everything else, n more rounds of load windows, each query's just
// after one of the floor route's, for how often a window's longest stall passes 20 ms on each route:
// one window a route cannot tell the wallet routes' stalls from the process's own.
const REPEATED_ROUNDS = Number(process.env.BENCH_WALLETS_REPEAT ?? 0);
const STALL_LIMIT_MS = 20;
// After each block of the floor route's series from the client, about what the five queries take:
// blocks back to back leave the lists' refresh behind (a list more than 64 versions behind is
// sorted again).
const FLOOR_BLOCK_REST_MS = 40;

const urlOf = (server: Hapi.Server): string => `http://127.0.0.1:${(server.listener.address() as AddressInfo).port}`;

const bodyOf = async (url: string): Promise<string> => (await fetch(url)).text();

// A forced collection (with --expose-gc, the bench script's) leaves the pages it freed to V8's
// sweeper threads; until they are swept, the main thread's next collections finish the work
// themselves: at a million wallets, 20-30 ms scavenges and 40-70 ms stalls for a second or two after
// each (a gc performance observer and the main thread's schedstat, three runs). Each measured
// window starts once the sweeping is done, so that it counts the wallet routes, not the bench's gc().
const SETTLE_MS = 2_000;
const settle = (): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
const collectAndSettle = async (): Promise<void> => {
    (globalThis as { gc?: () => void }).gc?.();
    await settle();
};

// monitorEventLoopDelay counts a stall from its second tick on: one that starts at once after
// enable() is not counted (a 300 ms block right after it read 1.3 ms). The window opens once armed.
const ARM_MS = 5;
const openWindow = async (delay: IntervalHistogram): Promise<void> => {
    delay.reset();
    delay.enable();
    await new Promise((resolve) => setTimeout(resolve, ARM_MS));
};
// The histogram counts a stall at its next tick: one that ended just before the window closes is
// counted once a tick has passed.
const closeWindow = async (delay: IntervalHistogram, stopLoad: () => void): Promise<void> => {
    stopLoad();
    await new Promise((resolve) => setTimeout(resolve, ARM_MS));
    delay.disable();
};

/** A window's longest stall, and the longest of the process's own making. */
interface Repeated {
    stallMs: number;
    ownStallMs: number;
}

/** core-api's wallet routes and ours over one core-state repository, for each size. */
export const benchWallets = async (): Promise<string[]> => {
    const rows: string[] = [];
    for (const size of SIZES) {
        rows.push(...(await benchSize(size)), "");
    }
    return rows;
};

const benchSize = async (size: number): Promise<string[]> => {
    const heapUsed = (): number => {
        // With --expose-gc (the bench script's), the figures leave garbage out. The catalogue keeps
        // its sort numbers in typed arrays, outside the heap: those count too.
        (globalThis as { gc?: () => void }).gc?.();
        const { heapUsed: heap, arrayBuffers } = process.memoryUsage();
        return heap + arrayBuffers;
    };
    // Alone on the machine, before anything else of this size is built.
    const heapFloor = describeHeapFloor(size, await measureHeapFloor(size));
    // Its state is built beside ours, on the other core.
    const coreApiHost = CORE_API_IN_SAME_PROCESS ? undefined : startCoreApiHost(size);
    const heapBefore = heapUsed();
    // The wallet thread as the plugin runs it: its default niceness below the node's thread.
    const state = createWalletState(size, 1, Number(defaults.threads.niceness));
    const wallets = state.repository.allByAddress();
    // Every block applied, for core-api's host to apply before each comparison.
    const appliedBlocks: number[] = [];
    /** When the bench applied each block: a stall within one is the block's work, not the routes'. */
    const blockSpans: Span[] = [];
    const applyBlock = (block: number): void => {
        const begin = performance.now();
        applyBlockTo(state, wallets, block);
        blockSpans.push({ begin, end: performance.now() });
        appliedBlocks.push(block);
    };
    const ours = await createHttpServer(
        { host: "127.0.0.1", port: 0, whitelist: ["127.0.0.1"], apiKey: "", bodyBytes: 65536 },
        async (server) => {
            await server.register({ plugin: walletRoutesPlugin, options: state.routes });
            // The floor: a route that answers at once, under the same load, in the same process. The
            // registrar is called under each prefix: this is BASELINE under "/api".
            server.route({ method: "GET", path: BASELINE.replace(/^\/api/, ""), handler: () => ({ data: {} }) });
        },
    );
    const coreApi: CoreApiHost = coreApiHost
        ? await coreApiHost.ready
        : await (async () => {
              const server = await state.coreApiServer();
              await server.start();
              return { url: urlOf(server), sync: async () => undefined, stop: () => server.stop() };
          })();
    /** core-api's body for a query, with the blocks applied so far. */
    const coreApiBody = async (query: string): Promise<string> => {
        await coreApi.sync(appliedBlocks);
        return bodyOf(`${coreApi.url}${query}`);
    };
    await ours.start();
    const delay = monitorEventLoopDelay({ resolution: 1 });
    const collections = new Collections();
    const promotions = new Promotions();
    const anatomy = new StallAnatomy();
    /** The longest stall of the process's own making in each window of the wallet routes. */
    const ownStalls: { window: string; ms: number }[] = [];
    /**
     * A closed window's longest stall by the anatomy's timer, taken apart, and the longest of the
     * node's collections within it (those seen so far are then forgotten). Where the machine stood
     * still in the histogram's longest stall, the longest of the process's own is the timer's
     * longest besides; otherwise the histogram's (the figure the issue names).
     */
    const takeApart = async (
        opened: number,
        closed: number,
        stallMs: number,
    ): Promise<{ stall: string; collection: string; ownStallMs: number }> => {
        const stalls = await anatomy.longest();
        const within = await collections.takeWithin(opened, closed);
        const own = ownStall(stalls);
        const ownStallMs = own === stalls.longest ? stallMs : own ? own.end - own.begin : 0;
        return {
            stall: describeStalls(stalls, within, blockSpans),
            collection: describeLongest(within),
            ownStallMs,
        };
    };
    const stallText = (stallMs: number, ownStallMs: number): string =>
        ownStallMs === stallMs ? stallMs.toFixed(1) : `${stallMs.toFixed(1)} (own ${ownStallMs.toFixed(1)})`;
    /** Windows whose longest stall reached STALL_LIMIT_MS, each with what its stall was. */
    const longWindows: string[] = [];
    /**
     * A load on one route with a block every BLOCK_TIME_MS, and the longest stall while it runs.
     * The window opens once the load's thread is started (its start is the bench's, not the
     * route's) and the garbage of what ran before it is collected and swept.
     */
    const measuredLoad = async (
        url: string,
        firstBlock: number,
    ): Promise<{
        result: LoadResult;
        stallMs: number;
        ownStallMs: number;
        collection: string;
        stall: string;
        promoted: string;
    }> => {
        let blocks: NodeJS.Timeout | undefined;
        let promotedBytes = 0;
        let block = 0;
        let opened = 0;
        let closed = 0;
        const result = await runLoad(
            { urls: [url] },
            LOAD,
            async () => {
                await collectAndSettle();
                await openWindow(delay);
                anatomy.start();
                promotions.start();
                opened = performance.now();
                blocks = setInterval(() => applyBlock(firstBlock + block++), BLOCK_TIME_MS);
            },
            // Before the load's thread is ended and its latencies sorted: the bench's work, not the routes'.
            async () => {
                await closeWindow(delay, () => clearInterval(blocks));
                closed = performance.now();
                // The timer's watch ends first: reading the profile is the bench's work, not the window's.
                anatomy.stop();
                promotedBytes = promotions.stop();
            },
        );
        const stallMs = delay.max / 1e6;
        const { stall, collection, ownStallMs } = await takeApart(opened, closed, stallMs);
        if (url.includes("/wallets")) {
            ownStalls.push({ window: `${url.replace(/^.*\/api/, "")} under load`, ms: ownStallMs });
        }
        const unexpected = Object.keys(result.statuses).filter((status) => status !== "200");
        if (unexpected.length > 0) {
            // A window of errors would measure the error path (the floor route was once a 404).
            throw new Error(`${url} answered ${JSON.stringify(result.statuses)} under load`);
        }
        if (stallMs >= STALL_LIMIT_MS) {
            longWindows.push(`${url.replace(/^.*\/api/, "")} ${stallMs.toFixed(1)} ms (${stall})`);
        }
        const promoted = `${(promotedBytes / 1e6).toFixed(2)} MB, ${(promotedBytes / Math.max(1, result.requests)).toFixed(0)} B a request`;
        return { result, stallMs, ownStallMs, collection, stall, promoted };
    };
    /** The first request of each query after each block, asked from a client of its own; then the floor route's. */
    const timeAfterBlocksFromClient = async (): Promise<{
        queries: number[];
        floor: number[];
        stallMs: number;
        collection: string;
        stall: string;
        floorStallMs: number;
        floorCollection: string;
        floorStall: string;
    }> => {
        const asker = startAsker(CLIENT_HOST);
        try {
            const queryUrls = QUERIES.map((query) => `${urlOf(ours)}${query}`);
            await asker.timeEach(queryUrls); // the client's first requests load it
            await collectAndSettle();
            await openWindow(delay);
            anatomy.start();
            const opened = performance.now();
            const queries: number[] = [];
            for (let block = 0; block < BLOCKS_MEASURED_FROM_CLIENT; block++) {
                applyBlock(5_000 + block);
                queries.push(...(await asker.timeEach(queryUrls)));
            }
            delay.disable();
            const stallMs = delay.max / 1e6;
            const { stall, collection, ownStallMs } = await takeApart(opened, performance.now(), stallMs);
            ownStalls.push({ window: "the first request of each query after a block, from a client", ms: ownStallMs });
            const floor: number[] = [];
            await collectAndSettle();
            await openWindow(delay);
            anatomy.start();
            const floorOpened = performance.now();
            for (let block = 0; block < BLOCKS_MEASURED_FROM_CLIENT; block++) {
                applyBlock(6_000 + block);
                floor.push(...(await asker.timeEach([`${urlOf(ours)}${BASELINE}`])));
                await new Promise((resolve) => setTimeout(resolve, FLOOR_BLOCK_REST_MS));
            }
            delay.disable();
            const floorApart = await takeApart(floorOpened, performance.now(), delay.max / 1e6);
            return {
                queries: queries.sort((a, b) => a - b),
                floor: floor.sort((a, b) => a - b),
                stallMs,
                collection,
                stall,
                floorStallMs: delay.max / 1e6,
                floorCollection: floorApart.collection,
                floorStall: floorApart.stall,
            };
        } finally {
            await asker.close();
        }
    };
    const rows = [
        `Wallet listings, ${size.toLocaleString("en")} wallets in a core-state WalletRepository, concurrency ${LOAD.concurrency}, up to ${LOAD.maxRequests} requests or ${LOAD.maxMs / 1000} s each; during ours a block every ${BLOCK_TIME_MS / 1000} s changes ${WALLETS_PER_BLOCK} wallets; core-api's routes ${CORE_API_IN_SAME_PROCESS ? "in this process, over the same repository" : "in a process of their own, over an equal repository given the same blocks before each comparison"}`,
        "",
        heapFloor,
        "",
    ];
    try {
        // The server's and the client's first request (Hapi's response path, fetch's loading) cost
        // the same whatever the route: paid here, on the floor route, so that the first listings'
        // stall below is the wallet lists' own.
        await bodyOf(`${urlOf(ours)}${BASELINE}`);
        // First listings: every order and filter built from nothing, in slices, asked at once by a
        // client of its own (as clients ask: in-thread, the bench's fetch compiled and ran on the
        // node's thread inside the window, 5 of the 20 samples of a 20 ms stall under perf).
        const firstAsker = startAsker(CLIENT_HOST, QUERIES.length);
        const heapStates = heapUsed(); // collects
        let firstStarted = 0;
        let firstEnded = 0;
        try {
            await firstAsker.timeTogether(QUERIES.map(() => `${urlOf(ours)}${BASELINE}`)); // its connections opened
            await settle();
            await openWindow(delay);
            anatomy.start();
            firstStarted = performance.now();
            await firstAsker.timeTogether(QUERIES.map((query) => `${urlOf(ours)}${query}`));
            firstEnded = performance.now();
        } finally {
            await firstAsker.close();
        }
        const firstMs = firstEnded - firstStarted;
        delay.disable();
        const buildStallMs = delay.max / 1e6;
        const { stall: buildStall, ownStallMs: buildOwnStallMs } = await takeApart(
            firstStarted,
            firstEnded,
            buildStallMs,
        );
        ownStalls.push({ window: "the first listings", ms: buildOwnStallMs });
        const heapCatalogue = heapUsed() - heapStates;
        const thread = await state.catalogue.threadState();
        const threadBytes = (thread?.heapUsed ?? 0) + (thread?.external ?? 0);
        await settle(); // both heaps were just collected, by heapUsed() and threadState()

        // The first request of each order and filter after each of 30 blocks.
        await openWindow(delay);
        anatomy.start();
        const blocksOpened = performance.now();
        const afterBlock: number[] = [];
        let unequal = 0;
        for (let block = 0; block < BLOCKS_MEASURED; block++) {
            applyBlock(block);
            for (const query of QUERIES) {
                const started = performance.now();
                await bodyOf(`${urlOf(ours)}${query}`);
                afterBlock.push(performance.now() - started);
            }
        }
        delay.disable();
        const blocksStallMs = delay.max / 1e6;
        const {
            stall: blocksStall,
            collection: blocksCollection,
            ownStallMs: blocksOwnStallMs,
        } = await takeApart(blocksOpened, performance.now(), blocksStallMs);
        ownStalls.push({ window: "the first request of each query after a block, in-thread", ms: blocksOwnStallMs });
        afterBlock.sort((a, b) => a - b);
        // The same after more blocks for the floor route: what the first request after a block
        // waits for in this process whatever it asks (the block's changes sent to the wallet thread,
        // the collections of a heap this size).
        const floorAfterBlock: number[] = [];
        for (let block = 0; block < BLOCKS_MEASURED; block++) {
            applyBlock(500 + block);
            const started = performance.now();
            await bodyOf(`${urlOf(ours)}${BASELINE}`);
            floorAfterBlock.push(performance.now() - started);
        }
        floorAfterBlock.sort((a, b) => a - b);
        // Equal to core-api's after more blocks, outside the windows whose stalls are counted
        // (with BENCH_WALLETS_CORE_API=same-process core-api sorts every wallet in this thread).
        for (let block = BLOCKS_MEASURED; block < BLOCKS_MEASURED + 3; block++) {
            applyBlock(block);
            for (const query of QUERIES) {
                const [mine, theirs] = [await bodyOf(`${urlOf(ours)}${query}`), await coreApiBody(query)];
                unequal += mine === theirs ? 0 : 1;
            }
        }

        rows.push(
            `Catalogue (after one request to the floor route): first listing of ${QUERIES.length} orders and filters asked at once from a client ${CLIENT_HOST} of its own ${(firstMs / 1000).toFixed(2)} s (sorted in slices; longest event-loop stall ${buildStallMs.toFixed(1)} ms; taken apart: ${buildStall}), memory: the wallet thread's heap and typed arrays ${(threadBytes / 1e6).toFixed(0)} MB (${(threadBytes / size).toFixed(0)} bytes a wallet), the node's heap ${heapCatalogue >= 0 ? "+" : ""}${(heapCatalogue / 1e6).toFixed(0)} MB (the wallets themselves ${((heapStates - heapBefore) / 1e6).toFixed(0)} MB).`,
            `After each of ${BLOCKS_MEASURED} blocks of ${WALLETS_PER_BLOCK} changed wallets, the first request of each query: p50 ${percentile(afterBlock, 0.5).toFixed(1)} ms, p99 ${percentile(afterBlock, 0.99).toFixed(1)} ms, max ${afterBlock[afterBlock.length - 1].toFixed(1)} ms; longest event-loop stall ${blocksStallMs.toFixed(1)} ms (longest collection of the node's heap: ${blocksCollection}; taken apart: ${blocksStall}); bodies unequal to core-api's: ${unequal} of ${QUERIES.length * 3}. The floor route, first request after each of ${BLOCKS_MEASURED} more blocks: p50 ${percentile(floorAfterBlock, 0.5).toFixed(1)} ms, p99 ${percentile(floorAfterBlock, 0.99).toFixed(1)} ms, max ${floorAfterBlock[floorAfterBlock.length - 1].toFixed(1)} ms.`,
            "",
            "| query | core-api req/s | core-api p50 ms | ours req/s | ours p50 ms | ours p99 ms | ours longest stall ms | the node's longest collection then | the longest stall by a 1 ms timer, taken apart | promoted to the node's old generation | ratio (req/s) | bodies equal |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        );
        // The process's first load at this rate stalls the loop whatever the route: at a million
        // wallets the first window held 29-158 ms stalls in five runs (four of them traced), much
        // of it on the CPU outside any collection; with the floor route's window first, that one
        // held 28 and 57 ms, and the same query after it 8.5 and 12 ms. It is paid here, on the
        // floor route, and reported apart.
        const {
            result: firstFloor,
            stallMs: firstFloorStallMs,
            collection: firstFloorCollection,
        } = await measuredLoad(`${urlOf(ours)}${BASELINE}`, 3_000);
        for (const query of QUERIES) {
            const [a, b] = await Promise.all([bodyOf(`${urlOf(ours)}${query}`), coreApiBody(query)]);
            // core-api sorts every wallet per request: at a million, one request at a time, one is enough.
            const theirs = await runLoad(
                { urls: [`${coreApi.url}${query}`] },
                size >= 500_000 ? { ...LOAD, concurrency: 1, maxRequests: 1, maxMs: 1 } : LOAD,
            );
            const {
                result: mine,
                stallMs,
                ownStallMs,
                collection,
                stall,
                promoted,
            } = await measuredLoad(`${urlOf(ours)}${query}`, 1_000);
            rows.push(
                formatRow([
                    `\`${query.replace("/api", "")}\``,
                    theirs.perSecond,
                    theirs.p50Ms,
                    mine.perSecond,
                    mine.p50Ms,
                    mine.p99Ms,
                    stallText(stallMs, ownStallMs),
                    collection,
                    stall,
                    promoted,
                    theirs.requests > 0
                        ? `${(mine.perSecond / theirs.perSecond).toFixed(0)}×`
                        : `none: core-api answered no request (${JSON.stringify(theirs.statuses)})`,
                    a === b ? "yes" : "NO",
                ]),
            );
        }
        // What this process's event loop shows without any wallet work: its garbage collector
        // marking a heap of this size while requests allocate.
        const {
            result: floor,
            stallMs: floorStallMs,
            collection: floorCollection,
            promoted: floorPromoted,
        } = await measuredLoad(`${urlOf(ours)}${BASELINE}`, 2_000);
        const fromClient = await timeAfterBlocksFromClient();
        const repeated = { floor: [] as Repeated[], queries: [] as Repeated[] };
        for (let round = 0; round < REPEATED_ROUNDS; round++) {
            // The floor route's window just before each query's: as many windows of each, in the same
            // stretch of the machine's time, so that the two counts can be compared.
            for (const path of QUERIES) {
                for (const [url, kept] of [
                    [`${urlOf(ours)}${BASELINE}`, repeated.floor],
                    [`${urlOf(ours)}${path}`, repeated.queries],
                ] as const) {
                    const { stallMs, ownStallMs } = await measuredLoad(url, 8_000 + round * 10);
                    kept.push({ stallMs, ownStallMs });
                }
            }
        }
        rows.push(
            "",
            `Floor: a route that answers \`{"data":{}}\` at once, same load and blocks, same process: ${floor.perSecond.toFixed(0)} req/s, p50 ${floor.p50Ms.toFixed(2)} ms, p99 ${floor.p99Ms.toFixed(2)} ms, longest event-loop stall ${floorStallMs.toFixed(1)} ms (longest collection: ${floorCollection}), promoted to the node's old generation ${floorPromoted}; in the process's first load, before the table's: ${firstFloor.perSecond.toFixed(0)} req/s, longest stall ${firstFloorStallMs.toFixed(1)} ms (longest collection: ${firstFloorCollection}).`,
            "",
            `After the table, the same from a client ${CLIENT_HOST} of its own, ${BLOCKS_MEASURED_FROM_CLIENT} blocks: the first request of each query p50 ${percentile(fromClient.queries, 0.5).toFixed(1)} ms, p99 ${percentile(fromClient.queries, 0.99).toFixed(1)} ms, max ${fromClient.queries[fromClient.queries.length - 1].toFixed(1)} ms; longest event-loop stall ${fromClient.stallMs.toFixed(1)} ms (longest collection of the node's heap: ${fromClient.collection}; the longest stall by a 1 ms timer, taken apart: ${fromClient.stall}). The floor route, after each of ${BLOCKS_MEASURED_FROM_CLIENT} more blocks: p50 ${percentile(fromClient.floor, 0.5).toFixed(1)} ms, p99 ${percentile(fromClient.floor, 0.99).toFixed(1)} ms, max ${fromClient.floor[fromClient.floor.length - 1].toFixed(1)} ms; longest event-loop stall ${fromClient.floorStallMs.toFixed(1)} ms (longest collection: ${fromClient.floorCollection}; taken apart: ${fromClient.floorStall}).`,
        );
        rows.push(
            "",
            `Windows whose longest stall reached ${STALL_LIMIT_MS} ms, each taken apart (the node's collections within it; the node's thread on a CPU and waiting for one, from the kernel's schedstat, which is current to a scheduler tick, a few ms; the rest it slept: in a collection waiting for V8's helper threads, or in the kernel; the time the hypervisor took from the node's CPU as steal, and the time its CPU was left unaccounted, no scheduler tick coming while it stood, both from /proc/stat in 10 ms steps): ${longWindows.length > 0 ? longWindows.join("; ") : "none"}.`,
        );
        if (REPEATED_ROUNDS > 0) {
            const over = (stalls: Repeated[]): string =>
                `${stalls.filter(({ stallMs }) => stallMs >= STALL_LIMIT_MS).length} of ${stalls.length} (of the process's own making: ${stalls.filter(({ ownStallMs }) => ownStallMs >= STALL_LIMIT_MS).length})`;
            const listed = (stalls: Repeated[]): string =>
                stalls.map(({ stallMs, ownStallMs }) => stallText(stallMs, ownStallMs)).join(", ");
            const own = (stalls: Repeated[]): number[] => stalls.map(({ ownStallMs }) => ownStallMs);
            const median = (values: number[]): string =>
                percentile(
                    [...values].sort((a, b) => a - b),
                    0.5,
                ).toFixed(1);
            const longest = (values: number[]): string => Math.max(...values).toFixed(1);
            const floorOwn = own(repeated.floor);
            const queriesOwn = own(repeated.queries);
            const differences = queriesOwn.map((ms, index) => ms - floorOwn[index]);
            rows.push(
                "",
                `${REPEATED_ROUNDS} more rounds of windows, each query's just after one of the floor route's: windows whose longest stall reached ${STALL_LIMIT_MS} ms: the floor route ${over(repeated.floor)}, the queries ${over(repeated.queries)}. The longest stall of the process's own making in a window: the floor route's median ${median(floorOwn)} ms, longest ${longest(floorOwn)} ms; the queries' median ${median(queriesOwn)} ms, longest ${longest(queriesOwn)} ms; a query's window less the floor route's before it, median ${median(differences)} ms. Longest stall of each window (ms), round by round in the table's order: the floor route ${listed(repeated.floor)}; the queries ${listed(repeated.queries)}.`,
            );
        }
        const longestOwn = ownStalls.reduce((longest, stall) => (stall.ms > longest.ms ? stall : longest));
        rows.push(
            "",
            `The longest stall of the process's own making in a window of the wallet routes (in a window whose longest stall came while the machine stood still, the node's CPU held by the hypervisor or not running for half of it or more, the longest besides): ${longestOwn.ms.toFixed(1)} ms, ${longestOwn.window}.`,
        );
    } finally {
        collections.stop();
        await Promise.all([ours.stop(), coreApi.stop(), state.catalogue.dispose()]);
    }
    return rows;
};
