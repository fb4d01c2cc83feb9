import { Worker } from "worker_threads";

import { OriginLoad, Webhook } from "../contracts";
import { kernelEventData } from "../delivery/announcer";
import { WEBHOOK_EVENTS } from "../events/catalogue";
import { spawnWorker } from "../worker/spawn";
import { AnnouncementQueue } from "./announcement-queue";
import { EngineCallbacks, EngineHandle } from "./engine-handle";
import { EngineQuery, EngineWorkerData, FromEngine, KernelAnnouncement, ToEngine } from "./messages";

// A thread that dies again and again is started again after a growing pause, never in a loop.
const RESTART_DELAY_MS = 1_000;
const RESTART_DELAY_MAX_MS = 30_000;
// A thread that ran this long without dying starts the delay afresh.
const HEALTHY_RUN_MS = 60_000;
const QUERY_TIMEOUT_MS = 2_000;
// Beyond the attempts' own timeout: a last outcome to record and the connection to close.
const STOP_GRACE_MS = 5_000;
/**
 * How often the node's thread asks the kernel which announcements a listener hears, and tells the
 * engine when that changed. A listener added in between misses the attempts announced until the
 * next look: the kernel says nothing when a listener is added, and sending every attempt across
 * to be asked about there cost the node's thread a fifth of what the plugin costs it per delivery.
 */
const HEARD_CHECK_MS = 250;
const ANNOUNCED: readonly string[] = Object.values(WEBHOOK_EVENTS);

interface PendingQuery {
    resolve: (message: Extract<FromEngine, { kind: "answer" }> | undefined) => void;
    timer: NodeJS.Timeout;
}

/** Whether a kernel listener hears `name`; when the kernel cannot tell, it is told anyway. */
const askIsHeard = (isHeard: EngineCallbacks["isHeard"], name: string): boolean => {
    try {
        return isHeard?.(name) ?? true;
    } catch {
        return true;
    }
};

/**
 * The delivery engine in a worker thread of its own. The node's thread only posts to it: wake-ups
 * (coalesced to one message a turn), register changes, and questions for `GET /api` and
 * `/metrics`. A thread that dies is logged and started again; it loses nothing, since everything
 * owed is in the file and the new thread starts from the file.
 */
export class ThreadedEngine implements EngineHandle {
    private worker: Worker | undefined;
    private stopping = false;
    private restartCount = 0;
    private failuresInARow = 0;
    private startedAt = 0;
    private restartTimer: NodeJS.Timeout | undefined;
    private exited: Promise<void> = Promise.resolve();
    private readonly woken = new Set<string>();
    private wakeScheduled = false;
    private lastQuery = 0;
    private readonly queries = new Map<number, PendingQuery>();
    private readonly announcements: AnnouncementQueue;
    private heardTimer: NodeJS.Timeout | undefined;
    /** The heard names last told to the engine's thread, joined; undefined: not told yet. */
    private heardNamesSent: string | undefined;

    public constructor(
        private readonly data: EngineWorkerData,
        private readonly callbacks: EngineCallbacks,
        private readonly delayMs = RESTART_DELAY_MS,
    ) {
        this.announcements = new AnnouncementQueue(callbacks.dispatchEvent);
    }

    public get restarts(): number {
        return this.restartCount;
    }

    public get running(): boolean {
        return this.worker !== undefined;
    }

    /** The engine's thread, for diagnostics (and tests that kill it). */
    public get thread(): Worker | undefined {
        return this.worker;
    }

    /** Resolves once the thread has loaded the register and delivers; rejects when it cannot start. */
    public async start(): Promise<void> {
        await this.spawn();
        if (this.callbacks.isHeard) {
            this.heardTimer = setInterval(() => this.tellHeard(), HEARD_CHECK_MS);
            this.heardTimer.unref();
        }
    }

    public wake(webhookIds: readonly string[] = []): void {
        webhookIds.forEach((id) => this.woken.add(id));
        if (this.wakeScheduled) {
            return;
        }
        this.wakeScheduled = true;
        setImmediate(() => {
            this.wakeScheduled = false;
            const ids = [...this.woken];
            this.woken.clear();
            this.post({ kind: "wake", webhookIds: ids });
        });
    }

    public resume(webhookId: string): void {
        this.post({ kind: "resume", webhookId });
    }

    public webhookChanged(webhook: Webhook): void {
        this.post({ kind: "webhook-put", webhook });
    }

    public webhookRemoved(id: string): void {
        this.post({ kind: "webhook-removed", id });
    }

    public async origins(): Promise<OriginLoad[]> {
        return (await this.ask("origins"))?.origins ?? [];
    }

    public async metrics(): Promise<string> {
        return (await this.ask("metrics"))?.metrics ?? "";
    }

    public async stop(): Promise<void> {
        this.stopping = true;
        clearTimeout(this.restartTimer);
        clearInterval(this.heardTimer);
        const worker = this.worker;
        if (!worker) {
            return;
        }
        // Held while stopping: an unreferenced thread would let the process end before the file closes.
        worker.ref();
        this.post({ kind: "stop" });
        let timer: NodeJS.Timeout | undefined;
        const grace = new Promise(
            (resolve) => (timer = setTimeout(resolve, this.data.options.delivery.timeoutMs + STOP_GRACE_MS)),
        );
        await Promise.race([this.exited, grace]);
        clearTimeout(timer);
        await worker.terminate();
        await this.exited;
        this.announcements.flush();
    }

    private spawn(): Promise<void> {
        const worker = spawnWorker("engine-thread", this.data, __dirname, this.data.options.threads.niceness);
        this.worker = worker;
        this.startedAt = Date.now();
        // A new thread knows nothing yet: it is told at once (it sends every announcement until then).
        this.heardNamesSent = undefined;
        this.tellHeard();
        let ready: () => void = () => undefined;
        let failed: (error: Error) => void = () => undefined;
        const started = new Promise<void>((resolve, reject) => {
            ready = resolve;
            failed = reject;
        });
        let lastError: Error | undefined;
        worker.on("message", (message: FromEngine) => {
            if (message.kind === "ready") {
                // Held until ready: a process with nothing else to do would end while the plugin starts.
                worker.unref();
                ready();
            } else {
                this.receive(message);
            }
        });
        worker.on("error", (error) => {
            lastError = error;
        });
        this.exited = new Promise((resolve) =>
            worker.once("exit", (code) => {
                resolve();
                failed(
                    lastError ?? new Error(`the delivery engine's thread ended with code ${code} before it was ready`),
                );
                this.exit(worker, code, lastError);
            }),
        );
        return started;
    }

    private exit(worker: Worker, code: number, error: Error | undefined): void {
        if (this.worker !== worker) {
            return;
        }
        this.worker = undefined;
        this.queries.forEach((query) => query.resolve(undefined));
        if (this.stopping) {
            return;
        }
        this.restartCount++;
        this.failuresInARow = Date.now() - this.startedAt > HEALTHY_RUN_MS ? 1 : this.failuresInARow + 1;
        const delay = Math.min(this.delayMs * 2 ** (this.failuresInARow - 1), RESTART_DELAY_MAX_MS);
        const reason = error ? String(error) : `exit code ${code}`;
        this.callbacks.log(
            "error",
            `the delivery engine's thread died (${reason}); starting a new one in ${delay} ms: nothing owed is lost, deliveries under way are sent again`,
        );
        this.restartTimer = setTimeout(() => {
            this.spawn().catch((spawnError: unknown) =>
                this.callbacks.log("error", `the delivery engine's thread could not start: ${String(spawnError)}`),
            );
        }, delay);
    }

    /**
     * A message's announcements that some kernel listener hears, as the kernel gets them. Nobody
     * listening is the common case on a node: the kernel's dispatch (a pattern match over every
     * listened name, and promises) would cost the node's thread for nothing. Asked once a message
     * per name, not once an attempt.
     */
    private heardAnnouncements({ webhooks, events }: Extract<FromEngine, { kind: "announce" }>): KernelAnnouncement[] {
        const { isHeard } = this.callbacks;
        const heard = new Map<string, boolean>();
        const announced: KernelAnnouncement[] = [];
        for (const { name, webhook, facts } of events) {
            let listened = heard.get(name);
            if (listened === undefined) {
                listened = askIsHeard(isHeard, name);
                heard.set(name, listened);
            }
            if (listened) {
                announced.push({ name, data: kernelEventData(facts, webhooks[webhook]) });
            }
        }
        return announced;
    }

    /** Tells the engine's thread which announcement names a kernel listener hears, when that changed. */
    private tellHeard(): void {
        const { isHeard } = this.callbacks;
        if (!isHeard) {
            return;
        }
        const names = ANNOUNCED.filter((name) => askIsHeard(isHeard, name));
        const told = names.join(" ");
        if (told !== this.heardNamesSent) {
            this.heardNamesSent = told;
            this.post({ kind: "heard", names });
        }
    }

    private receive(message: Exclude<FromEngine, { kind: "ready" }>): void {
        const { callbacks } = this;
        switch (message.kind) {
            case "announce":
                return this.announcements.push(this.heardAnnouncements(message));
            case "disable":
                // The attempts that led to it are announced first, as they happened.
                this.announcements.flush();
                void callbacks.disableWebhook(message.webhookId, message.reason).then(
                    (changed) => this.post({ kind: "disabled", requestId: message.requestId, changed }),
                    (error: unknown) => {
                        callbacks.log("error", `could not disable webhook ${message.webhookId}: ${String(error)}`);
                        this.post({ kind: "disabled", requestId: message.requestId, changed: false });
                    },
                );
                return;
            case "storage-failed":
                callbacks.health.failed(message.part, message.error);
                return;
            case "storage-succeeded":
                return callbacks.health.succeeded(message.part);
            case "journal-damaged":
                return callbacks.journalDamaged(message.bytes);
            case "log":
                return callbacks.log(message.level, message.message);
            case "answer":
                return this.queries.get(message.requestId)?.resolve(message);
        }
    }

    private ask(query: EngineQuery): Promise<Extract<FromEngine, { kind: "answer" }> | undefined> {
        if (!this.worker) {
            return Promise.resolve(undefined);
        }
        const requestId = ++this.lastQuery;
        return new Promise((resolve) => {
            const done = (message: Extract<FromEngine, { kind: "answer" }> | undefined) => {
                clearTimeout(pending.timer);
                this.queries.delete(requestId);
                resolve(message);
            };
            const pending: PendingQuery = { resolve: done, timer: setTimeout(() => done(undefined), QUERY_TIMEOUT_MS) };
            this.queries.set(requestId, pending);
            this.post({ kind: "query", requestId, query });
        });
    }

    private post(message: ToEngine): void {
        this.worker?.postMessage(message);
    }
}
