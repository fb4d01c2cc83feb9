/** What the node's thread and the delivery engine's thread say to each other; both sides import these types. */
import { OriginLoad, Webhook } from "../contracts";
import { PluginOptions } from "../config/options";
import { AttemptFacts, PublicWebhook } from "../delivery/announcer";
import { StoragePart } from "../store/storage-health";

/** Given to the engine's thread when it starts: everything it needs is cloneable. */
export interface EngineWorkerData {
    file: string;
    options: PluginOptions;
    userAgent: string;
}

/** A storage error as it crosses threads: its message and SQLite code, which StorageHealth reads. */
export interface StorageErrorShape {
    message: string;
    code?: string;
}

export type EngineQuery = "origins" | "metrics";

/** From the node's thread to the engine. */
export type ToEngine =
    /** These webhooks were just given deliveries, or enabled again; no ids: look for due work. */
    | { kind: "wake"; webhookIds: string[] }
    /** An operator asked for one of its deliveries now: its origin's pause ends. */
    | { kind: "resume"; webhookId: string }
    | { kind: "webhook-put"; webhook: Webhook }
    | { kind: "webhook-removed"; id: string }
    | { kind: "disabled"; requestId: number; changed: boolean }
    | { kind: "query"; requestId: number; query: EngineQuery }
    /** The announcement names some kernel listener hears now: the engine sends no others across. */
    | { kind: "heard"; names: string[] }
    /** The plugin stops: the engine finishes the attempts under way, records them and exits. */
    | { kind: "stop" };

export interface KernelAnnouncement {
    name: string;
    data: unknown;
}

/** An attempt's announcement as it crosses: its webhook is an index into the message's `webhooks`. */
export interface CrossingAnnouncement {
    name: string;
    webhook: number;
    facts: AttemptFacts;
}

export type LogLevel = "info" | "warning" | "error";

/** From the engine to the node's thread. */
export type FromEngine =
    | { kind: "ready" }
    /** Kernel events to dispatch (`webhooks.broadcasted` / `webhooks.failed`), in order. */
    | { kind: "announce"; webhooks: PublicWebhook[]; events: CrossingAnnouncement[] }
    | { kind: "disable"; requestId: number; webhookId: string; reason: string }
    | { kind: "storage-failed"; part: StoragePart; error: StorageErrorShape }
    | { kind: "storage-succeeded"; part: StoragePart }
    | { kind: "journal-damaged"; bytes: number }
    | { kind: "log"; level: LogLevel; message: string }
    | { kind: "answer"; requestId: number; origins?: OriginLoad[]; metrics?: string };
