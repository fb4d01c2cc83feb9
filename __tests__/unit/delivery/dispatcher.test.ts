import { Delivery, Webhook } from "../../../src/contracts";
import { DeliveryDispatcher, DispatcherDependencies } from "../../../src/delivery/dispatcher";
import { SendOutcome, SendRequest } from "../../../src/delivery/sender";
import { DriverName, MemoryOutbox } from "../../support/memory-outbox";

const webhook = (id: string, target = `http://${id}.test/hook`): Webhook => ({
    id,
    event: "block.applied",
    target,
    enabled: true,
    conditions: [],
    match: "any",
    token: "ab".repeat(32),
    createdAt: 0,
    updatedAt: 0,
});

const answered = (statusCode: number, retryAfterMs?: number): SendOutcome => ({
    result: { kind: "response", statusCode, retryAfterMs },
    responseExcerpt: "",
});

interface Sent {
    request: SendRequest;
    at: number;
    answer: (outcome: SendOutcome) => void;
}

/** A sender whose requests wait until the test answers them, or that answers at once. */
class ScriptedSender {
    public readonly sent: Sent[] = [];

    public constructor(private readonly immediate?: (request: SendRequest) => SendOutcome | Error | undefined) {}

    public send(request: SendRequest): Promise<SendOutcome> {
        return new Promise((resolve, reject) => {
            const reply = this.immediate?.(request);
            this.sent.push({ request, at: Date.now(), answer: resolve });
            if (reply instanceof Error) {
                reject(reply);
            } else if (reply) {
                resolve(reply);
            }
        });
    }

    public to(host: string): Sent[] {
        return this.sent.filter((sent) => sent.request.target.includes(`//${host}.`));
    }
}

const dispatcherOver = (
    outbox: MemoryOutbox,
    sender: ScriptedSender,
    webhooks: Webhook[],
    options: Partial<ConstructorParameters<typeof DeliveryDispatcher>[0]> = {},
    clock: () => number = Date.now,
    expander: DispatcherDependencies["expander"] = {
        expand: () => ({ drained: true, webhookIds: [], deliveries: [], committed: 0, gatherMs: 0 }),
    },
) =>
    new DeliveryDispatcher(
        {
            concurrency: 50,
            concurrencyPerTarget: 4,
            concurrencyPerTargetFloor: 1,
            retryScheduleSeconds: [5, 60],
            autoDisableAfterDeadDeliveries: 0,
            ...options,
        },
        {
            outbox: outbox.driver(),
            expander,
            sender,
            findWebhook: (id) => webhooks.find((candidate) => candidate.id === id),
            disableWebhook: async () => true,
            health: { failed: () => "", succeeded: () => undefined },
            onReport: () => undefined,
            onError: () => undefined,
            random: () => 0.5,
            clock,
        },
    );

/**
 * What the expander does over a journal the test fills: writes the journal's deliveries to the
 * outbox, and returns them. `journalEvents` journals `count` events for webhook "a", ids from `from`.
 */
const journalOver = (outbox: MemoryOutbox) => {
    const journal: Delivery[][] = [];
    const expander: DispatcherDependencies["expander"] = {
        expand: () => {
            const deliveries = journal.shift() ?? [];
            outbox.journalFile.deliveries.push(...deliveries.map((delivery) => ({ ...delivery })));
            const webhookIds = [...new Set(deliveries.map((delivery) => delivery.webhookId))];
            return { drained: journal.length === 0, webhookIds, deliveries, committed: deliveries.length, gatherMs: 0 };
        },
    };
    const journalEvents = (from: number, count: number): void => {
        const before = outbox.deliveries.length;
        outbox.owe("a", count, Date.now());
        journal.push(
            outbox.deliveries.splice(before).map((delivery, index) => ({ ...delivery, id: `a-${from + index}` })),
        );
    };
    return { expander, journalEvents };
};

/** The sizes of the outbox's write transactions, in order. */
const countWrites = (outbox: MemoryOutbox): number[] => {
    const writes: number[] = [];
    const recordAll = outbox.recordAll.bind(outbox);
    outbox.recordAll = (outcomes) => {
        writes.push(outcomes.length);
        recordAll(outcomes);
    };
    return writes;
};

/** Each send happened at its expected time, or a turn of the event loop (a millisecond or two) after it. */
const expectSentAt = (sent: Sent[], expected: number[]): void => {
    expect(sent).toHaveLength(expected.length);
    sent.forEach(({ at }, index) => {
        expect(at).toBeGreaterThanOrEqual(expected[index]);
        expect(at).toBeLessThanOrEqual(expected[index] + 5);
    });
};

let dispatcher: DeliveryDispatcher | undefined;
let sender: ScriptedSender | undefined;

const onATurnedClock = (): void => {
    beforeEach(() => jest.useFakeTimers({ now: 0 }));

    afterEach(async () => {
        // Attempts still waiting for an answer get one, so that stop() has nothing to wait for.
        sender?.sent.forEach((sent) => sent.answer(answered(200)));
        const stopping = dispatcher?.stop();
        await jest.runOnlyPendingTimersAsync();
        await stopping;
        dispatcher = undefined;
        sender = undefined;
        jest.useRealTimers();
    });
};

describe.each<DriverName>(["sqlite", "postgres"])(
    "the dispatcher over the %s outbox, on a clock the test turns",
    (driverName) => {
        onATurnedClock();
        const newOutbox = (): MemoryOutbox => new MemoryOutbox(driverName);

        it("retries a 503 after the scheduled delay, not before", async () => {
            const outbox = newOutbox();
            outbox.owe("a");
            sender = new ScriptedSender(() => answered(503));
            dispatcher = dispatcherOver(outbox, sender, [webhook("a")]);
            dispatcher.start();

            await jest.advanceTimersByTimeAsync(4_900);
            expectSentAt(sender.sent, [0]);

            await jest.advanceTimersByTimeAsync(200);
            expectSentAt(sender.sent, [0, 5_000]);
        });

        it("waits as long as a Retry-After asks when it is longer than the schedule", async () => {
            const outbox = newOutbox();
            outbox.owe("a");
            sender = new ScriptedSender(() => answered(429, 30_000));
            dispatcher = dispatcherOver(outbox, sender, [webhook("a")]);
            dispatcher.start();

            await jest.advanceTimersByTimeAsync(29_000);
            expect(sender.sent).toHaveLength(1);

            await jest.advanceTimersByTimeAsync(2_000);
            expectSentAt(sender.sent, [0, 30_000]);
        });

        it("keeps a target to its connections, and a freed one takes the next due delivery", async () => {
            const outbox = newOutbox();
            outbox.owe("a", 5);
            sender = new ScriptedSender();
            dispatcher = dispatcherOver(outbox, sender, [webhook("a")], { concurrencyPerTarget: 2 });
            dispatcher.start();

            await jest.advanceTimersByTimeAsync(10);
            expect(sender.sent).toHaveLength(2);

            sender.sent[0].answer(answered(200));
            await jest.advanceTimersByTimeAsync(10);
            expect(sender.sent).toHaveLength(3);
            expect(dispatcher.load.inFlight).toBe(2);
        });

        it("sends a retry on time while the journal keeps giving its webhook deliveries from memory", async () => {
            const outbox = newOutbox();
            const { expander, journalEvents } = journalOver(outbox);
            sender = new ScriptedSender((request) =>
                request.headers["webhook-id"] === "a-0" ? answered(503) : answered(200),
            );
            dispatcher = dispatcherOver(
                outbox,
                sender,
                [webhook("a")],
                { retryScheduleSeconds: [1, 60] },
                Date.now,
                expander,
            );
            dispatcher.start();
            for (let tick = 0; tick < 20; tick++) {
                journalEvents(tick, 1);
                dispatcher.wake();
                await jest.advanceTimersByTimeAsync(100);
            }

            const retries = sender.sent.filter((sent) => sent.request.headers["webhook-id"] === "a-0");
            expectSentAt(retries, [0, 1_000]);
            expect(sender.sent).toHaveLength(21);
        });

        it("keeps to the global cap across targets", async () => {
            const outbox = newOutbox();
            const hooks = ["a", "b", "c", "d"].map((id) => webhook(id));
            hooks.forEach((hook) => outbox.owe(hook.id, 3));
            sender = new ScriptedSender();
            dispatcher = dispatcherOver(outbox, sender, hooks, { concurrency: 5 });
            dispatcher.start();

            await jest.advanceTimersByTimeAsync(10);

            expect(sender.sent).toHaveLength(5);
        });

        it("sends another webhook's retry on time while a receiver hangs with deliveries held behind its cap", async () => {
            const outbox = newOutbox();
            outbox.owe("hang", 10);
            outbox.owe("retry");
            sender = new ScriptedSender((request) => (request.target.includes("//retry.") ? answered(503) : undefined));
            dispatcher = dispatcherOver(outbox, sender, [webhook("hang"), webhook("retry")], {
                concurrencyPerTarget: 2,
                retryScheduleSeconds: [1, 1, 1],
            });
            dispatcher.start();

            await jest.advanceTimersByTimeAsync(3_500);

            expect(sender.to("hang")).toHaveLength(2);
            expectSentAt(sender.to("retry"), [0, 1_000, 2_000, 3_000]);
        });

        it("sends a retry that falls due while a pass is running, however the clock moves during the pass", async () => {
            const outbox = newOutbox();
            outbox.owe("hang", 10);
            outbox.owe("retry");
            sender = new ScriptedSender((request) => (request.target.includes("//retry.") ? answered(503) : undefined));
            jest.setSystemTime(1_000_000);
            // A loaded process: the clock a pass reads at its start lags the one it reads at its end.
            let reads = 0;
            const jittery = (): number => Date.now() + (reads++ % 2 === 0 ? -1 : 1);
            dispatcher = dispatcherOver(
                outbox,
                sender,
                [webhook("hang"), webhook("retry")],
                { concurrencyPerTarget: 2, retryScheduleSeconds: [1, 1, 1] },
                jittery,
            );
            dispatcher.start();

            await jest.advanceTimersByTimeAsync(3_500);

            expect(sender.to("retry")).toHaveLength(4);
        });

        it("holds a webhook back, 1 s then 2 s, when its attempts throw, instead of sending again at once", async () => {
            const outbox = newOutbox();
            outbox.owe("a");
            sender = new ScriptedSender(() => new Error("sender broke"));
            dispatcher = dispatcherOver(outbox, sender, [webhook("a")]);
            dispatcher.start();

            await jest.advanceTimersByTimeAsync(3_500);

            expectSentAt(sender.sent, [0, 1_000, 3_000]);
            expect(outbox.recorded).toEqual([]);
        });

        it("sends nothing more once an outcome cannot be written, and writes the held ones once it can", async () => {
            const outbox = newOutbox();
            outbox.owe("a", 3);
            sender = new ScriptedSender(() => answered(200));
            let broken = true;
            const recordAll = outbox.recordAll.bind(outbox);
            outbox.recordAll = (outcomes) => {
                if (broken) {
                    throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
                }
                recordAll(outcomes);
            };
            dispatcher = dispatcherOver(outbox, sender, [webhook("a")], { concurrencyPerTarget: 1 });
            dispatcher.start();

            await jest.advanceTimersByTimeAsync(1_000);
            // Answered before the first write was tried: held, not lost.
            const sentBeforeTheFailure = sender.sent.length;
            expect(sentBeforeTheFailure).toBeGreaterThanOrEqual(1);
            expect(dispatcher.load.unrecorded).toBe(sentBeforeTheFailure);
            outbox.owe("a", 2);
            dispatcher.wake(["a"]);
            await jest.advanceTimersByTimeAsync(5_000);
            expect(sender.sent).toHaveLength(sentBeforeTheFailure);

            broken = false;
            await jest.advanceTimersByTimeAsync(5_000);
            expect(sender.sent).toHaveLength(5);
            expect(new Set(sender.sent.map((sent) => sent.request.headers["webhook-id"])).size).toBe(5);
            expect(outbox.recorded.map((outcome) => outcome.status)).toEqual(Array(5).fill("delivered"));
        });

        it("frees an answered attempt's slot before its outcome is written, and writes the outcomes together", async () => {
            const outbox = newOutbox();
            outbox.owe("a", 6);
            const writes = countWrites(outbox);
            sender = new ScriptedSender();
            dispatcher = dispatcherOver(outbox, sender, [webhook("a")], { concurrencyPerTarget: 1 });
            dispatcher.start();
            await jest.advanceTimersByTimeAsync(1);

            for (let answered200 = 1; answered200 <= 5; answered200++) {
                sender.sent[answered200 - 1].answer(answered(200));
                await jest.advanceTimersByTimeAsync(1);
                // The next one went out on the freed slot while the outcomes before it wait.
                expect(sender.sent).toHaveLength(answered200 + 1);
            }
            expect(writes).toEqual([]);
            sender.sent[5].answer(answered(200));
            await jest.advanceTimersByTimeAsync(1);

            // Nothing else under way: the six are written at once, in one transaction.
            expect(writes).toEqual([6]);
            expect(outbox.recorded).toHaveLength(6);
            expect(new Set(sender.sent.map((sent) => sent.request.headers["webhook-id"])).size).toBe(6);
        });

        it("writes at most 256 outcomes in one transaction", async () => {
            const outbox = newOutbox();
            outbox.owe("a", 300);
            const writes = countWrites(outbox);
            sender = new ScriptedSender();
            dispatcher = dispatcherOver(outbox, sender, [webhook("a")], {
                concurrency: 300,
                concurrencyPerTarget: 300,
                concurrencyPerTargetFloor: 300,
            });
            dispatcher.start();
            await jest.advanceTimersByTimeAsync(10);
            expect(sender.sent).toHaveLength(300);

            // All answered in one turn.
            sender.sent.forEach((sent) => sent.answer(answered(200)));
            await jest.advanceTimersByTimeAsync(10);

            expect(writes).toEqual([256, 44]);
            expect(outbox.recorded).toHaveLength(300);
        });

        it("writes an outcome within 50 ms while other attempts are still under way", async () => {
            const outbox = newOutbox();
            outbox.owe("a", 2);
            sender = new ScriptedSender();
            dispatcher = dispatcherOver(outbox, sender, [webhook("a")]);
            dispatcher.start();
            await jest.advanceTimersByTimeAsync(1);
            expect(sender.sent).toHaveLength(2);

            sender.sent[0].answer(answered(200));
            await jest.advanceTimersByTimeAsync(40);
            expect(outbox.recorded).toHaveLength(0);
            await jest.advanceTimersByTimeAsync(15);
            expect(outbox.recorded.map((outcome) => outcome.attempt.deliveryId)).toEqual(["a-0"]);
            expect(outbox.deliveries[1].status).toBe("pending");
        });
    },
);

describe("the dispatcher over the SQLite outbox's read-ahead, on a clock the test turns", () => {
    onATurnedClock();

    it("sends the deliveries the journal gives a webhook from memory while nothing else fell due, and reads the file again when something may have", async () => {
        const outbox = new MemoryOutbox();
        const reads = jest.spyOn(outbox, "dueOf");
        const { expander, journalEvents } = journalOver(outbox);
        sender = new ScriptedSender(() => answered(200));
        dispatcher = dispatcherOver(outbox, sender, [webhook("a")], {}, Date.now, expander);
        dispatcher.start();
        for (let round = 0; round < 10; round++) {
            journalEvents(round * 10, 10);
            dispatcher.wake();
            await jest.advanceTimersByTimeAsync(10);
        }
        expect(sender.sent).toHaveLength(100);
        expect(new Set(sender.sent.map((sent) => sent.request.headers["webhook-id"])).size).toBe(100);
        expect(reads.mock.calls.length).toBeLessThanOrEqual(2);

        // A ping (written by the node's thread, which wakes the dispatcher with the webhook's id).
        outbox.owe("a", 1, Date.now());
        dispatcher.wake(["a"]);
        await jest.advanceTimersByTimeAsync(10);
        expect(sender.sent).toHaveLength(101);

        // An attempt that throws leaves its delivery pending: it is read back from the file.
        let fail = true;
        sender = Object.assign(sender, {
            send: () => {
                const outcome = fail ? new Error("sender broke") : answered(200);
                fail = false;
                return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome);
            },
        });
        journalEvents(1000, 1);
        dispatcher.wake();
        await jest.advanceTimersByTimeAsync(2_000);
        expect(outbox.recorded.filter((outcome) => outcome.attempt.deliveryId === "a-1000")).toHaveLength(1);
    });

    it("looks for webhooks with work once, at start, however many passes fail", async () => {
        const outbox = new MemoryOutbox();
        outbox.owe("a");
        const looks = jest.spyOn(outbox, "pendingWebhookIds");
        // The first pass goes through; the three after it fail.
        let passes = 0;
        sender = new ScriptedSender(() => answered(200));
        dispatcher = dispatcherOver(outbox, sender, [webhook("a")], {}, Date.now, {
            expand: () => {
                passes++;
                if (passes >= 2 && passes <= 4) {
                    throw Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR" });
                }
                return { drained: true, webhookIds: [], deliveries: [], committed: 0, gatherMs: 0 };
            },
        });
        dispatcher.start();

        await jest.advanceTimersByTimeAsync(10_000);

        expect(passes).toBeGreaterThan(4);
        expect(sender.sent).toHaveLength(1);
        expect(looks).toHaveBeenCalledTimes(1);
    });

    it("reads a webhook's due deliveries once for many attempts, each sent once", async () => {
        const outbox = new MemoryOutbox();
        outbox.owe("a", 600);
        const reads = jest.spyOn(outbox, "dueOf");
        sender = new ScriptedSender(() => answered(200));
        dispatcher = dispatcherOver(outbox, sender, [webhook("a")], { concurrencyPerTarget: 2 });
        dispatcher.start();

        await jest.advanceTimersByTimeAsync(5_000);

        expect(sender.sent).toHaveLength(600);
        expect(new Set(sender.sent.map((sent) => sent.request.headers["webhook-id"])).size).toBe(600);
        // 256 a read, and a few that find only what is in flight: reading for each attempt took 600.
        expect(reads.mock.calls.length).toBeLessThanOrEqual(10);
        expect(outbox.recorded.filter((outcome) => outcome.status === "delivered")).toHaveLength(600);
    });
});
