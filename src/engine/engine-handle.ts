import { OriginLoad, Webhook } from "../contracts";
import { StorageHealth } from "../store/storage-health";
import { LogLevel } from "./messages";

/** What the node's thread holds of the delivery engine, wherever the engine runs. */
export interface EngineHandle {
    start(): Promise<void>;
    /** Webhooks just given deliveries (or enabled again); none: look for due work. Cheap to call per event. */
    wake(webhookIds?: readonly string[]): void;
    /** An operator asked for one of the webhook's deliveries now (a redelivery, a ping): its origin's pause ends. */
    resume(webhookId: string): void;
    webhookChanged(webhook: Webhook): void;
    webhookRemoved(id: string): void;
    origins(): Promise<OriginLoad[]>;
    /** The engine's metrics in Prometheus text; empty while it is not running. */
    metrics(): Promise<string>;
    /** Times the engine's thread died and was started again. */
    readonly restarts: number;
    readonly running: boolean;
    /** Waits for the attempts under way and their outcomes, then ends the engine. */
    stop(): Promise<void>;
}

/** What the engine needs of the node's thread. */
export interface EngineCallbacks {
    dispatchEvent: (name: string, data: unknown) => void;
    /** Whether a kernel listener besides the plugin's own hears events of this name (absent: assume one does). */
    isHeard?: (name: string) => boolean;
    disableWebhook: (webhookId: string, reason: string) => Promise<boolean>;
    health: Pick<StorageHealth, "failed" | "succeeded">;
    /** A damaged journal record of `bytes` was passed over. */
    journalDamaged: (bytes: number) => void;
    log: (level: LogLevel, message: string) => void;
}
