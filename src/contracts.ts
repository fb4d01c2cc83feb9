export const CONDITION_NAMES = [
    "between",
    "contains",
    "eq",
    "falsy",
    "gt",
    "gte",
    "lt",
    "lte",
    "ne",
    "not-between",
    "regexp",
    "truthy",
] as const;

export type ConditionName = (typeof CONDITION_NAMES)[number];

export interface Condition {
    key: string;
    condition: ConditionName;
    value?: unknown;
}

/** "any": the spec's rule, one true condition fires the webhook; "all": every condition must hold. */
export type MatchMode = "any" | "all";

export interface Webhook {
    id: string;
    event: string;
    target: string;
    enabled: boolean;
    conditions: Condition[];
    match: MatchMode;
    token: string;
    createdAt: number;
    updatedAt: number;
}

/** A webhook as it is shown outside the register (the API, kernel events): never its token. */
export const publicWebhook = (webhook: Webhook) => ({
    id: webhook.id,
    event: webhook.event,
    target: webhook.target,
    enabled: webhook.enabled,
    conditions: webhook.conditions,
    match: webhook.match,
});

/** The fields a client may set; the rest are the register's. */
export type WebhookInput = Pick<Webhook, "event" | "target" | "enabled" | "conditions" | "match">;

/** "cancelled": ended without an attempt, for example when the receiver answered 410 Gone; see `reason`. */
export type DeliveryStatus = "pending" | "delivered" | "failed" | "dead" | "cancelled";

export interface Delivery {
    id: string;
    webhookId: string;
    event: string;
    /** The exact JSON body posted on every attempt, so that retries carry the same bytes. */
    body: string;
    status: DeliveryStatus;
    attempts: number;
    nextAttemptAt: number | null;
    /** Why the delivery ended the way it did, where an attempt does not say (a cancellation). */
    reason: string | null;
    createdAt: number;
    updatedAt: number;
}

export interface Attempt {
    deliveryId: string;
    number: number;
    startedAt: number;
    durationMs: number;
    statusCode: number | null;
    error: string | null;
    responseExcerpt: string | null;
}

/** Whether the database file accepts writes, as `GET /api` shows it. */
export interface StorageState {
    state: "ok" | "degraded";
    file: string;
    /** What failed last, while degraded. */
    cause: string | null;
    since: number | null;
}

/** The listener's spool of events the file refused, as `GET /api` shows it. */
export interface SpoolStats {
    events: number;
    bytes: number;
    maxBytes: number;
    /** Events lost because the spool was full or the event could not be written at all, since start. */
    dropped: number;
}

/** One origin's state, as `GET /api` shows it. */
export interface OriginLoad {
    origin: string;
    /** Attempts it may have under way now. */
    concurrency: number;
    inFlight: number;
    /** Smoothed duration of its recent attempts, and the lowest seen lately. */
    latencyMs: number | null;
    baselineLatencyMs: number | null;
    /** Paused by a Retry-After until then (epoch ms), or null. */
    pausedUntil: number | null;
}

/** Where the register of webhooks lives, as `GET /api` shows it. */
export type RegisterState =
    | { driver: "sqlite" }
    | {
          driver: "postgres";
          /** Host, port and database; never the password. */
          database: string;
          /** This relay follows the shared register's changes now. */
          following: boolean;
          since: number;
          reason: string | null;
          /** Another relay runs under this relay's name (storage.postgres.relayName): what was seen. */
          duplicateRelayName: string | null;
      };

/**
 * What a relay holding webhooks does with a shared register it did not follow before: "refuse"
 * keeps its copy and writes nothing there; "offer" adds its copy to it; "adopt" replaces its copy.
 */
export type UnknownRegisterPolicy = "refuse" | "offer" | "adopt";

/** Journal records the engine found damaged and passed over since start, as `GET /api` and `/metrics` show them. */
export interface JournalDamage {
    records: number;
    bytes: number;
}
