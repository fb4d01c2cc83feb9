import { fork } from "child_process";
import { createServer } from "http";
import { AddressInfo } from "net";
import { join } from "path";

import { nextMessageOf } from "./child-messages";
import { CostFigures, CostPlan, FromHost, ToHost, WARM_UP_BLOCKS } from "./cost-host";
import { formatRow, percentile } from "./load";

const PLAN: CostPlan = { webhooks: 10, blocks: 10, eventsPerBlock: 150, blockIntervalMs: 1000 };
const DELIVERIES = PLAN.webhooks * PLAN.blocks * PLAN.eventsPerBlock;
// The run ends when the receiver has every delivery, or when none arrived for this long.
const IDLE_LIMIT_MS = 10_000;

interface HostRun {
    figures: CostFigures;
    delivered: number;
}

/** A receiver in this process that answers 200 at once and counts. */
const countingReceiver = async () => {
    let count = 0;
    let last = Date.now();
    const server = createServer((request, response) => {
        request.resume();
        request.on("end", () => {
            count++;
            last = Date.now();
            response.writeHead(200).end("ok");
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
        get count() {
            return count;
        },
        get idleMs() {
            return Date.now() - last;
        },
        reset: () => {
            count = 0;
            last = Date.now();
        },
        stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
};

/** One plugin in a host process of its own (bench/cost-host.ts), fed the plan's blocks. */
const runHost = async (which: "ours" | "ark" | "floor"): Promise<HostRun> => {
    const receiver = await countingReceiver();
    const child = fork(join(__dirname, "cost-host.ts"), [which, receiver.url], {
        execArgv: [
            "--require",
            "ts-node/register/transpile-only",
            "--expose-gc",
            ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
        ],
        stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const say = (message: ToHost): void => void child.send(message);
    const heard = (kind: FromHost["kind"]): Promise<FromHost> =>
        nextMessageOf<FromHost>(child, kind, `the ${which} host`);
    try {
        await heard("ready");
        say({ kind: "run", plan: PLAN });
        await heard("dispatched");
        // The floor host sends nothing: its figures are the dispatching alone.
        while (which !== "floor" && receiver.count < DELIVERIES && receiver.idleMs < IDLE_LIMIT_MS) {
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const figures = heard("figures");
        say({ kind: "delivered" });
        const { figures: measured } = (await figures) as Extract<FromHost, { kind: "figures" }>;
        const delivered = receiver.count;
        say({ kind: "finish" });
        await new Promise((resolve) => child.once("exit", resolve));
        return { figures: measured, delivered };
    } finally {
        child.kill();
        await receiver.stop();
    }
};

const perDelivery = (ms: number, delivered: number): string => (delivered > 0 ? (ms / delivered).toFixed(4) : "–");

// Deliveries owed by the blocks after the warm-up ones: counted only when the run delivered all.
const DELIVERIES_AFTER_WARM_UP = PLAN.webhooks * (PLAN.blocks - WARM_UP_BLOCKS) * PLAN.eventsPerBlock;
const afterWarmUp = ({ figures, delivered }: HostRun): number =>
    delivered === DELIVERIES ? figures.cpuAfterWarmUpMs / DELIVERIES_AFTER_WARM_UP : NaN;

// Of an even count, the upper of the two middle values.
const medianOf = (values: readonly number[]): number =>
    percentile(
        [...values].sort((a, b) => a - b),
        0.5,
    );

// Rounds of the three hosts, ARK's and ours taking turns at going first: a machine whose speed
// drifts over a minute (another tenant, the CPU's clock) would otherwise favour whichever ran in
// its quicker half, and one pair of runs cannot tell a difference of a few percent from that.
const ROUNDS = Math.max(1, Number(process.env.BENCH_COST_ROUNDS ?? 5));

interface Round {
    ark: HostRun;
    ours: HostRun;
    floor: HostRun;
}

/**
 * What each plugin costs the node it lives in: each in a host process of its own, 10 webhooks on
 * transaction.applied, 10 blocks of 150 events a second, a receiver in this process answering 200
 * at once. Main-thread busy time (event-loop utilisation) and whole-process CPU per delivery, and
 * the host's event-loop delay, measured in the host; in rounds (BENCH_COST_ROUNDS, 5 by default),
 * each ratio given round by round and as their median.
 */
export const benchCost = async (): Promise<string[]> => {
    const rounds: Round[] = [];
    for (let index = 0; index < ROUNDS; index++) {
        const arkFirst = index % 2 === 0;
        const first = await runHost(arkFirst ? "ark" : "ours");
        const second = await runHost(arkFirst ? "ours" : "ark");
        const floor = await runHost("floor");
        rounds.push(arkFirst ? { ark: first, ours: second, floor } : { ark: second, ours: first, floor });
    }
    const row = (name: string, round: number, run: HostRun): string => {
        const { figures, delivered } = run;
        const afterWarmUpMs = afterWarmUp(run);
        return formatRow([
            String(round + 1),
            name,
            delivered,
            perDelivery(figures.busyMs, delivered),
            perDelivery(figures.cpuMs, delivered),
            Number.isNaN(afterWarmUpMs) ? "–" : afterWarmUpMs.toFixed(4),
            figures.delayP99Ms.toFixed(1),
            figures.delayMaxMs.toFixed(1),
        ]);
    };
    const ratios = (of: keyof CostFigures): number[] =>
        rounds.map(({ ours, ark }) => ours.figures[of] / ours.delivered / (ark.figures[of] / ark.delivered));
    const described = (values: number[], digits: number): string =>
        values.length === 1
            ? values[0].toFixed(digits)
            : `${values.map((value) => value.toFixed(digits)).join(", ")} (median ${medianOf(values).toFixed(digits)})`;
    const delayMax = (of: keyof Round): string =>
        described(
            rounds.map((round) => round[of].figures.delayMaxMs),
            1,
        );
    return [
        `Cost to the node: ${PLAN.webhooks} webhooks on transaction.applied, ${PLAN.blocks} blocks of ${PLAN.eventsPerBlock} events one a second (${DELIVERIES.toLocaleString("en")} deliveries), each plugin in a host process of its own with a kernel event dispatcher, the receiver in another process answering 200 at once; ${ROUNDS} round${ROUNDS === 1 ? "" : "s"}, ARK's and ours taking turns at going first`,
        "",
        `| round | plugin | delivered | main-thread busy ms per delivery | process CPU ms per delivery | the same after the first ${WARM_UP_BLOCKS} blocks | event-loop delay p99 (ms) | max (ms) |`,
        "|---|---|---|---|---|---|---|---|",
        ...rounds.flatMap(({ ark, ours, floor }, index) => [
            row("ARK core-webhooks", index, ark),
            row("ours", index, ours),
            formatRow([
                String(index + 1),
                "floor: the same dispatches, no plugin",
                "–",
                "–",
                "–",
                "–",
                floor.figures.delayP99Ms.toFixed(1),
                floor.figures.delayMaxMs.toFixed(1),
            ]),
        ]),
        "",
        `Ours ÷ ARK's, per delivery, round by round: main-thread busy time ${described(ratios("busyMs"), 3)}; whole-process CPU ${described(ratios("cpuMs"), 3)}; the same after the first ${WARM_UP_BLOCKS} blocks ${described(
            rounds.map(({ ours, ark }) => afterWarmUp(ours) / afterWarmUp(ark)),
            3,
        )}.`,
        `The first ${WARM_UP_BLOCKS} blocks also pay for each host's compiling its code as it first runs; ours compiles the engine's in a thread of its own, once a process. A node that has run for a while pays the figure after them.`,
        `Event-loop delay max (ms): ours ${delayMax("ours")}; ARK's ${delayMax("ark")}; the floor ${delayMax("floor")}. The floor rows are the host's own event-loop delay (its block loop and collections) with the same dispatches and no listener.`,
    ];
};
