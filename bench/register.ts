import { randomUUID } from "crypto";
import { mkdtempSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { monitorEventLoopDelay, performance } from "perf_hooks";

import { freePort } from "../__tests__/support/ports";
import { startPlugin } from "../__tests__/support/plugin-harness";
import { startArkWebhooks } from "./ark-webhooks";
import { formatRow, LoadPlan, LoadResult, runLoad } from "./load";

const SIZES = [1_000, 100_000];
const LOAD = { concurrency: 16, maxRequests: 3_000, maxMs: 8_000 };
export const TARGET = "http://127.0.0.1:9/hook";

const webhookBody = (index: number): string =>
    JSON.stringify({
        event: "block.applied",
        target: TARGET,
        enabled: true,
        conditions: [{ key: "height", condition: "gt", value: index % 1000 }],
    });

interface Side {
    name: string;
    url: string;
    ids: string[];
    stop(): Promise<void>;
}

/** Create bodies of block.applied webhooks, each with a condition of its own. */
export const BODIES = Array.from({ length: 1_000 }, (_, index) => webhookBody(index));
const WARM_UP = { concurrency: LOAD.concurrency, maxRequests: 500, maxMs: 1_000 };

const operations = (side: Side): Array<[string, LoadPlan]> => {
    const byId = side.ids.map((id) => `${side.url}/webhooks/${id}`);
    return [
        ["create", { method: "POST", urls: [`${side.url}/webhooks`], bodies: BODIES }],
        ["list", { urls: [`${side.url}/webhooks?page=1&limit=100`] }],
        ["retrieve", { urls: byId }],
        ["update", { method: "PUT", urls: byId, bodies: BODIES }],
        // Deletes walk the seeded ids from the end, so no id is deleted twice.
        ["delete", { method: "DELETE", urls: [...byId].reverse() }],
    ];
};

const seedRows = (count: number): Array<Record<string, unknown>> =>
    Array.from({ length: count }, (_, index) => ({
        id: randomUUID(),
        event: "block.applied",
        target: TARGET,
        enabled: true,
        conditions: [{ key: "height", condition: "gt", value: index % 1000 }],
        token: randomUUID().replace(/-/g, ""),
    }));

const startOurs = async (count: number): Promise<Side> => {
    const running = await startPlugin({ server: { whitelist: ["127.0.0.1"] } });
    const rows = seedRows(count);
    const created = await Promise.all(
        rows.map((row) =>
            running.plugin.register.create({
                event: String(row.event),
                target: TARGET,
                enabled: true,
                conditions: row.conditions as never,
                match: "any",
            }),
        ),
    );
    return { name: "ours", url: running.url, ids: created.map((webhook) => webhook.id), stop: () => running.stop() };
};

const startArk = async (count: number): Promise<Side> => {
    const dir = mkdtempSync(join(tmpdir(), "cww-bench-ark-"));
    const rows = seedRows(count);
    const ark = await startArkWebhooks(dir, await freePort(), rows, false);
    return {
        name: "ARK core-webhooks",
        url: ark.url,
        ids: rows.map((row) => String(row.id)),
        stop: async () => {
            await ark.stop();
            rmSync(dir, { recursive: true, force: true });
        },
    };
};

const describe = (result: LoadResult): string => {
    const failed = Object.entries(result.statuses).filter(([status]) => Number(status) >= 400 || status === "0");
    const label = (status: string): string => (status === "0" ? "connection reset" : status);
    return failed.length === 0
        ? ""
        : ` (errors: ${failed.map(([status, count]) => `${count}×${label(status)}`).join(", ")})`;
};

/** Create, list, retrieve, update and delete over real HTTP, ours and ARK's, at 1,000 and 100,000 stored. */
export const benchRegister = async (): Promise<string[]> => {
    const rows = [
        `Webhook register over HTTP, concurrency ${LOAD.concurrency} from a load thread of its own, each operation up to ${LOAD.maxRequests} requests or ${LOAD.maxMs / 1000} s after a warm-up of every operation (up to ${WARM_UP.maxRequests} requests or ${WARM_UP.maxMs / 1000} s each, so up to ${WARM_UP.maxRequests} more webhooks are stored)`,
        "",
        "| stored | operation | ARK req/s | ARK p50 ms | ours req/s | ours p50 ms | ours p99 ms | ratio (req/s) |",
        "|---|---|---|---|---|---|---|---|",
    ];
    const createRates = new Map<number, number>();
    for (const size of SIZES) {
        const results = new Map<string, LoadResult[]>();
        // Ours first: ARK's run leaves a process busy collecting its rewritten JSON files.
        for (const start of [startOurs, startArk]) {
            const side = await start(size);
            try {
                // Warm-up, not measured: every code path compiled and optimised before the clock runs.
                for (const [operation, plan] of operations(side).filter(([operation]) => operation !== "delete")) {
                    await runLoad(plan, WARM_UP).catch((error: unknown) => {
                        throw new Error(`warm-up of ${operation} on ${side.name} failed: ${String(error)}`);
                    });
                }
                for (const [operation, plan] of operations(side)) {
                    const result = await runLoad(plan, {
                        ...LOAD,
                        maxRequests:
                            operation === "delete" ? Math.min(LOAD.maxRequests, side.ids.length / 2) : LOAD.maxRequests,
                    });
                    results.set(operation, [...(results.get(operation) ?? []), result]);
                }
            } finally {
                await side.stop();
            }
        }
        for (const [operation, [ours, ark]] of results) {
            if (operation === "create") {
                createRates.set(size, ours.perSecond);
            }
            rows.push(
                formatRow([
                    size.toLocaleString("en"),
                    operation,
                    `${ark.perSecond.toFixed(1)}${describe(ark)}`,
                    ark.p50Ms,
                    `${ours.perSecond.toFixed(1)}${describe(ours)}`,
                    ours.p50Ms,
                    ours.p99Ms,
                    `${(ours.perSecond / ark.perSecond).toFixed(1)}×`,
                ]),
            );
        }
    }
    const [small, large] = SIZES.map((size) => createRates.get(size) ?? 0);
    rows.push(
        "",
        `Our create rate at ${SIZES[1].toLocaleString("en")} stored is ${((large / small) * 100).toFixed(0)} % of the rate at ${SIZES[0].toLocaleString("en")}.`,
    );
    return rows;
};

const WRITERS = 10;
const WRITES_MS = 5_000;

/**
 * The node's loop while 10 writers create and delete webhooks as fast as they are answered: its
 * longest stall (`monitorEventLoopDelay`) and the writes a second. Each write is answered once its
 * log is on disk; the flush runs on libuv's thread pool, not the node's thread.
 */
export const benchRegisterStall = async (): Promise<string[]> => {
    const ours = await startPlugin({ server: { whitelist: ["127.0.0.1"] } });
    const delay = monitorEventLoopDelay({ resolution: 1 });
    let writes = 0;
    try {
        const deadline = performance.now() + WRITES_MS;
        delay.enable();
        await Promise.all(
            Array.from({ length: WRITERS }, async () => {
                while (performance.now() < deadline) {
                    const { id } = await ours.plugin.register.create({
                        event: "block.applied",
                        target: TARGET,
                        enabled: true,
                        conditions: [],
                        match: "any",
                    });
                    await ours.plugin.register.delete(id);
                    writes += 2;
                }
            }),
        );
        delay.disable();
    } finally {
        await ours.stop();
    }
    return [
        `Register writes from ${WRITERS} writers at once (create, then delete, each answered once on disk) for ${WRITES_MS / 1000} s:`,
        "",
        "| writes/s | the node's loop: longest stall (ms) | p99 (ms) |",
        "|---|---|---|",
        formatRow([(writes * 1000) / WRITES_MS, delay.max / 1e6, delay.percentile(99) / 1e6]),
    ];
};
