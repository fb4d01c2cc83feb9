import { parentPort, workerData } from "worker_threads";

import { publicWebhook, Webhook } from "../contracts";
import { AttemptAnnouncement, PublicWebhook } from "../delivery/announcer";
import { DeliveryEngine, EngineHost } from "./delivery-engine";
import { EngineWorkerData, FromEngine, StorageErrorShape, ToEngine } from "./messages";

// The delivery engine's thread: its own event loop, heap and SQLite connection, so that nothing it
// does (conditions, fan-out, signing, HTTP, outcomes) runs on the node's loop.
const port = parentPort;
if (!port) {
    throw new Error("engine-thread runs as a worker thread");
}
const toNodeThread = (message: FromEngine): void => port.postMessage(message);

const shapeOf = (error: unknown): StorageErrorShape => {
    const { message, code } = (error ?? {}) as { message?: unknown; code?: unknown };
    return {
        message: typeof message === "string" ? message : String(error),
        ...(typeof code === "string" ? { code } : {}),
    };
};

// Announcements of one turn cross in one message: one message a turn, not one an attempt; and at
// most this many in one, so that taking a message never holds the node's loop for long.
const ANNOUNCEMENTS_PER_MESSAGE = 128;
let announcements: AttemptAnnouncement[] = [];
/** Each webhook crosses once a message, however many of its attempts the message tells of. */
const flushAnnouncements = (): void => {
    if (announcements.length === 0) {
        return;
    }
    const webhooks: PublicWebhook[] = [];
    const indexOf = new Map<Webhook, number>();
    const events = announcements.map(({ name, webhook, facts }) => {
        let index = indexOf.get(webhook);
        if (index === undefined) {
            index = webhooks.push(publicWebhook(webhook)) - 1;
            indexOf.set(webhook, index);
        }
        return { name, webhook: index, facts };
    });
    announcements = [];
    toNodeThread({ kind: "announce", webhooks, events });
};

/**
 * The announcement names some kernel listener hears, as the node's thread last said; until it has,
 * every announcement crosses. One nobody hears is not sent: crossing costs both threads, and the
 * node's thread would only drop it.
 */
let heard: ReadonlySet<string> | undefined;

let lastRequest = 0;
const disables = new Map<number, (changed: boolean) => void>();

const host: EngineHost = {
    announce: (announcement) => {
        if (heard && !heard.has(announcement.name)) {
            return;
        }
        const count = announcements.push(announcement);
        if (count === 1) {
            setImmediate(flushAnnouncements);
        } else if (count >= ANNOUNCEMENTS_PER_MESSAGE) {
            flushAnnouncements();
        }
    },
    disable: (webhookId, reason) =>
        new Promise((resolve) => {
            // The attempt that led to it is announced first, as it happened.
            flushAnnouncements();
            const requestId = ++lastRequest;
            disables.set(requestId, resolve);
            toNodeThread({ kind: "disable", requestId, webhookId, reason });
        }),
    storageFailed: (part, error) => toNodeThread({ kind: "storage-failed", part, error: shapeOf(error) }),
    storageSucceeded: (part) => toNodeThread({ kind: "storage-succeeded", part }),
    journalDamaged: (bytes) => toNodeThread({ kind: "journal-damaged", bytes }),
    log: (level, message) => toNodeThread({ kind: "log", level, message }),
};

const engine = new DeliveryEngine(workerData as EngineWorkerData, host);

const stop = async (): Promise<void> => {
    await engine.stop();
    // A disable asked and never answered changes nothing: the webhook is asked about again next time.
    disables.forEach((resolve) => resolve(false));
    flushAnnouncements();
    port.close();
};

const answer = async (requestId: number, query: "origins" | "metrics"): Promise<void> => {
    if (query === "origins") {
        toNodeThread({ kind: "answer", requestId, origins: engine.origins() });
    } else {
        toNodeThread({ kind: "answer", requestId, metrics: await engine.metrics.text() });
    }
};

port.on("message", (message: ToEngine) => {
    switch (message.kind) {
        case "wake":
            return engine.wake(message.webhookIds);
        case "resume":
            return engine.resume(message.webhookId);
        case "webhook-put":
            return engine.putWebhook(message.webhook);
        case "webhook-removed":
            return engine.removeWebhook(message.id);
        case "disabled":
            disables.get(message.requestId)?.(message.changed);
            disables.delete(message.requestId);
            return;
        case "heard":
            heard = new Set(message.names);
            return;
        case "query":
            void answer(message.requestId, message.query);
            return;
        case "stop":
            void stop();
            return;
    }
});

engine.start();
toNodeThread({ kind: "ready" });
