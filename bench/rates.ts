import { ChildProcess, fork } from "child_process";
import { createServer, Server } from "http";
import { AddressInfo } from "net";
import { cpus } from "os";
import { join } from "path";
import { performance } from "perf_hooks";

import { formatRow } from "./load";
import { FeedPlan, FromRatesHost, Plugin, ToRatesHost } from "./rates-host";

// A run ends when every delivery arrived, or none arrived for this long.
const IDLE_LIMIT_MS = 5_000;
const LATENCY_LIMIT_MS = 50;
const RATE_STEPS = [1_000, 2_000, 3_000, 4_000, 5_000, 6_000, 8_000];
const RATE_STEP_SECONDS = 4;

const wallClock = (): number => performance.timeOrigin + performance.now();

/** Receivers in this process that answer 200 at once and note each delivery's first arrival. */
class Receivers {
    private readonly servers: Server[] = [];
    private readonly firstArrivals = new Map<string, number>();
    private lastArrival = 0;
    public urls: string[] = [];

    public async start(count: number): Promise<void> {
        for (let index = 0; index < count; index++) {
            const server = createServer((request, response) => {
                const chunks: Buffer[] = [];
                request.on("data", (chunk: Buffer) => chunks.push(chunk));
                request.on("end", () => {
                    const arrived = wallClock();
                    response.writeHead(200).end("ok");
                    const { data } = JSON.parse(Buffer.concat(chunks).toString()) as {
                        data: { sequence: number; sentAt: number };
                    };
                    const key = `${request.url} ${data.sequence}`;
                    if (!this.firstArrivals.has(key)) {
                        this.firstArrivals.set(key, arrived - data.sentAt);
                        this.lastArrival = arrived;
                    }
                });
            });
            server.keepAliveTimeout = 30_000;
            await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
            this.servers.push(server);
        }
        this.urls = this.servers.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    }

    /** One target per webhook, spread over the receivers. */
    public targets(webhooks: number): string[] {
        return Array.from({ length: webhooks }, (_, index) => `${this.urls[index % this.urls.length]}/hook/${index}`);
    }

    public reset(): void {
        this.firstArrivals.clear();
        this.lastArrival = 0;
    }

    public get delivered(): number {
        return this.firstArrivals.size;
    }

    public get last(): number {
        return this.lastArrival;
    }

    public latencies(): number[] {
        return [...this.firstArrivals.values()].sort((a, b) => a - b);
    }

    public async stop(): Promise<void> {
        for (const server of this.servers) {
            server.closeAllConnections();
            await new Promise((resolve) => server.close(resolve));
        }
    }
}

export interface RateFigures {
    delivered: number;
    expected: number;
    perSecond: number;
    p50: number;
    p99: number;
    max: number;
}

const percentile = (sorted: readonly number[], p: number): number =>
    sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** A plugin in its host process (bench/rates-host.ts) with one webhook per target. */
class Host {
    private constructor(private readonly child: ChildProcess) {}

    public static async start(plugin: Plugin, targets: string[]): Promise<Host> {
        const child = fork(join(__dirname, "rates-host.ts"), [plugin, JSON.stringify(targets)], {
            execArgv: ["--require", "ts-node/register/transpile-only"],
            stdio: ["ignore", "inherit", "inherit", "ipc"],
        });
        const host = new Host(child);
        await host.heard("ready");
        return host;
    }

    public async feed(plan: FeedPlan): Promise<number> {
        this.say({ kind: "feed", plan });
        const fed = (await this.heard("fed")) as Extract<FromRatesHost, { kind: "fed" }>;
        return fed.firstAt;
    }

    public async finish(): Promise<void> {
        this.say({ kind: "finish" });
        await new Promise((resolve) => this.child.once("exit", resolve));
    }

    private say(message: ToRatesHost): void {
        this.child.send(message);
    }

    private heard(kind: FromRatesHost["kind"]): Promise<FromRatesHost> {
        return new Promise((resolve, reject) => {
            const onMessage = (message: FromRatesHost): void => {
                if (message.kind === kind) {
                    this.child.off("message", onMessage);
                    this.child.off("exit", onExit);
                    resolve(message);
                }
            };
            const onExit = (code: number | null): void =>
                reject(new Error(`a bench host exited (${code}) before "${kind}"`));
            this.child.on("message", onMessage);
            this.child.once("exit", onExit);
        });
    }
}

/** Feeds the plan and waits for every delivery (or for them to stop coming); the run's figures. */
const measure = async (host: Host, receivers: Receivers, plan: FeedPlan, webhooks: number): Promise<RateFigures> => {
    receivers.reset();
    const expected = plan.events * webhooks;
    const firstAt = await host.feed(plan);
    let seen = -1;
    let since = performance.now();
    while (receivers.delivered < expected && performance.now() - since < IDLE_LIMIT_MS) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        if (receivers.delivered !== seen) {
            seen = receivers.delivered;
            since = performance.now();
        }
    }
    const latencies = receivers.latencies();
    const seconds = (receivers.last - firstAt) / 1000;
    return {
        delivered: receivers.delivered,
        expected,
        perSecond: seconds > 0 ? receivers.delivered / seconds : 0,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        max: latencies[latencies.length - 1] ?? NaN,
    };
};

const PLUGINS: Array<[Plugin, string]> = [
    ["ceiling", "ceiling (bare listener)"],
    ["ark", "ARK core-webhooks"],
    ["ours", "ours"],
];

const RUNS: Array<{ name: string; plan: FeedPlan }> = [
    { name: "burst: 5,000 events at once", plan: { events: 5_000, ratePerSecond: 0 } },
    { name: "paced: 10,000 events at 1,000/s", plan: { events: 10_000, ratePerSecond: 1_000 } },
    { name: "fast: 15,000 events at 3,000/s", plan: { events: 15_000, ratePerSecond: 3_000 } },
    // The same burst once each host has run the others: the code it runs is compiled by then (for
    // ours, undici's llhttp WebAssembly among it), as in a node that has been up for a while.
    { name: "burst again, after the runs above", plan: { events: 5_000, ratePerSecond: 0 } },
];

const FAN_OUT = { webhooks: 100, receivers: 10, plan: { events: 1_000, ratePerSecond: 100 } };

const cell = (figures: RateFigures): string => {
    const lost = figures.expected - figures.delivered;
    return `${Math.round(figures.perSecond).toLocaleString("en")}/s, ${figures.p50.toFixed(0)} / ${figures.p99.toFixed(0)} / ${figures.max.toFixed(0)} ms${lost > 0 ? ` (${lost.toLocaleString("en")} missing)` : ""}`;
};

/** The fan-out run: FAN_OUT.webhooks webhooks on one event name, over FAN_OUT.receivers receivers. */
const fanOut = async (plugin: Plugin): Promise<RateFigures> => {
    const receivers = new Receivers();
    await receivers.start(FAN_OUT.receivers);
    const host = await Host.start(plugin, receivers.targets(FAN_OUT.webhooks));
    const figures = await measure(host, receivers, FAN_OUT.plan, FAN_OUT.webhooks);
    await host.finish();
    await receivers.stop();
    return figures;
};

/** `npm run bench -- fan-out`: the fan-out run alone, for each plugin (BENCH_CPU_PROF=<dir> profiles every thread). */
export const benchFanOut = async (): Promise<string[]> => {
    const rows: string[] = [];
    for (const [plugin, name] of PLUGINS) {
        rows.push(`| ${name} | ${cell(await fanOut(plugin))} |`);
    }
    return [
        `Fan-out: ${FAN_OUT.webhooks} webhooks on one event name (${FAN_OUT.receivers} receivers), ${FAN_OUT.plan.ratePerSecond} events/s for ${FAN_OUT.plan.events / FAN_OUT.plan.ratePerSecond} s: deliveries/s, latency p50 / p99 / max`,
        "",
        "| plugin | fan-out |",
        "|---|---|",
        ...rows,
    ];
};

/** The highest of RATE_STEPS at which every delivery arrives with p99 under LATENCY_LIMIT_MS. */
const highestRate = async (host: Host, receivers: Receivers): Promise<string> => {
    let best = "below 1,000/s";
    for (const rate of RATE_STEPS) {
        const figures = await measure(host, receivers, { events: rate * RATE_STEP_SECONDS, ratePerSecond: rate }, 1);
        if (figures.delivered < figures.expected || figures.p99 >= LATENCY_LIMIT_MS) {
            return `${best} (at ${rate.toLocaleString("en")}/s: p99 ${figures.p99.toFixed(0)} ms)`;
        }
        best = `${rate.toLocaleString("en")}/s`;
    }
    return `${best} or more`;
};

/**
 * Deliveries per second and latency (dispatch → the receiver reading the body), one webhook on
 * transaction.applied, each plugin in a host process of its own, the receivers in this process
 * answering 200 at once; beside ARK's plugin and a bare listener that only POSTs (the ceiling).
 */
export const benchRates = async (): Promise<string[]> => {
    const rows = new Map<Plugin, string[]>();
    const bursts = new Map<Plugin, number>();
    const warmBursts = new Map<Plugin, number>();
    for (const [plugin] of PLUGINS) {
        const receivers = new Receivers();
        await receivers.start(1);
        const host = await Host.start(plugin, receivers.targets(1));
        const cells: string[] = [];
        for (const { plan } of RUNS) {
            const figures = await measure(host, receivers, plan, 1);
            if (plan.ratePerSecond === 0) {
                (bursts.has(plugin) ? warmBursts : bursts).set(plugin, figures.perSecond);
            }
            cells.push(cell(figures));
        }
        cells.push(await highestRate(host, receivers));
        await host.finish();
        await receivers.stop();
        cells.push(cell(await fanOut(plugin)));
        rows.set(plugin, cells);
    }
    const header = [
        ...RUNS.map((run) => run.name),
        `highest paced rate with p99 < ${LATENCY_LIMIT_MS} ms (steps of ${RATE_STEP_SECONDS} s)`,
        "fan-out: 100 webhooks (10 receivers), 100 events/s for 10 s",
    ];
    const ratio = (of: Plugin, to: Plugin, runs = bursts): string =>
        ((runs.get(of) ?? 0) / (runs.get(to) ?? NaN)).toFixed(2);
    return [
        `Delivery rates on ${cpus().length} cores: deliveries/s to the last one, and latency p50 / p99 / max from the event's dispatch to the receiver reading the body (first arrival of each delivery); each plugin in a host process of its own with a kernel event dispatcher, the receivers in the bench's process answering 200 at once`,
        "",
        `| run | ${PLUGINS.map(([, name]) => name).join(" | ")} |`,
        `|---|${PLUGINS.map(() => "---").join("|")}|`,
        ...header.map((name, index) =>
            formatRow([name, ...PLUGINS.map(([plugin]) => rows.get(plugin)?.[index] ?? "–")]),
        ),
        "",
        `Burst, ours ÷ ceiling: ${ratio("ours", "ceiling")}; ours ÷ ARK's: ${ratio("ours", "ark")}. The burst again: ours ÷ ceiling ${ratio("ours", "ceiling", warmBursts)}; ours ÷ ARK's ${ratio("ours", "ark", warmBursts)}`,
    ];
};
