import { fork } from "child_process";
import { createServer } from "http";
import { AddressInfo } from "net";
import { join } from "path";

import { CostFigures, CostPlan, FromHost, ToHost } from "./cost-host";
import { formatRow } from "./load";

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
        new Promise((resolve, reject) => {
            const listener = (message: FromHost): void => {
                if (message.kind === kind) {
                    child.off("message", listener);
                    resolve(message);
                }
            };
            child.on("message", listener);
            child.once("exit", (code) => reject(new Error(`the ${which} host exited (${code}) before "${kind}"`)));
        });
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

/**
 * What each plugin costs the node it lives in: each in a host process of its own, 10 webhooks on
 * transaction.applied, 10 blocks of 150 events a second, a receiver in this process answering 200
 * at once. Main-thread busy time (event-loop utilisation) and whole-process CPU per delivery, and
 * the host's event-loop delay, measured in the host.
 */
export const benchCost = async (): Promise<string[]> => {
    const ark = await runHost("ark");
    const ours = await runHost("ours");
    const floor = await runHost("floor");
    const row = (name: string, { figures, delivered }: HostRun): string =>
        formatRow([
            name,
            delivered,
            perDelivery(figures.busyMs, delivered),
            perDelivery(figures.cpuMs, delivered),
            figures.delayP99Ms.toFixed(1),
            figures.delayMaxMs.toFixed(1),
        ]);
    const ratio = (of: keyof CostFigures): string =>
        (ours.figures[of] / ours.delivered / (ark.figures[of] / ark.delivered)).toFixed(3);
    return [
        `Cost to the node: ${PLAN.webhooks} webhooks on transaction.applied, ${PLAN.blocks} blocks of ${PLAN.eventsPerBlock} events one a second (${DELIVERIES.toLocaleString("en")} deliveries), each plugin in a host process of its own with a kernel event dispatcher, the receiver in another process answering 200 at once`,
        "",
        "| plugin | delivered | main-thread busy ms per delivery | process CPU ms per delivery | event-loop delay p99 (ms) | max (ms) |",
        "|---|---|---|---|---|---|",
        row("ARK core-webhooks", ark),
        row("ours", ours),
        formatRow([
            "floor: the same dispatches, no plugin",
            "–",
            "–",
            "–",
            floor.figures.delayP99Ms.toFixed(1),
            floor.figures.delayMaxMs.toFixed(1),
        ]),
        "",
        `Ours ÷ ARK's, per delivery: main-thread busy time ${ratio("busyMs")}, whole-process CPU ${ratio("cpuMs")}. The floor row is the host's own event-loop delay (its block loop and collections) with the same dispatches and no listener.`,
    ];
};
