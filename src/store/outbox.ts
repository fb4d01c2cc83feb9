import { Delivery } from "../contracts";
import { AttemptOutcome } from "./delivery-store";

/** What an expansion of the journal wrote to this relay's file (delivery/journal-expander.ts). */
export interface Expansion {
    webhookIds: readonly string[];
    deliveries: readonly Delivery[];
}

/** What a claim found of a webhook's due deliveries. */
export interface Claim {
    /** Due deliveries, soonest first: the dispatcher's to attempt until their outcome is recorded or they are released. */
    deliveries: Delivery[];
    /**
     * Until when the webhook has nothing more due, when the claim found fewer than asked: a time,
     * Infinity when it has nothing pending (or the outbox lets the next look find it), undefined
     * when it may have more due (attempts under way hold some).
     */
    idleUntil?: number;
}

/**
 * Where the dispatcher takes its work and leaves its outcomes: the storage driver, chosen once
 * when the engine is composed. The dispatcher (delivery/dispatcher.ts) is the one delivery loop; a driver
 * holds only what storage decides: which deliveries are due, who holds them, and what is written.
 *
 * - SqliteOutbox (store/sqlite-outbox.ts): this relay's own file; a claim lives in memory, since no one
 *   else delivers from it.
 * - PostgresOutbox (cluster/postgres-outbox.ts): the outbox every relay shares; a claim is a lease
 *   in the database, and this relay's own file only holds deliveries until they are forwarded.
 */
export interface Outbox {
    /**
     * How long the dispatcher may wait without looking at the outbox again, when others add work
     * it is not told of; undefined when it is told of all of it.
     */
    readonly lookEveryMs: number | undefined;
    /** The webhooks that may have due deliveries: at start, on a notice, and at each look. */
    webhooksWithWork(now: number): Promise<string[]>;
    /**
     * Takes in what an expansion of the journal wrote to this relay's file. Returns the webhooks
     * given work, and whether everything is taken in (false: the rest waits for the next pass).
     */
    takeIn(expansion: Expansion, now: number): Promise<{ webhookIds: string[]; done: boolean }>;
    /** Claims up to `limit` of the webhook's due deliveries, none already claimed. */
    claim(webhookId: string, now: number, limit: number): Promise<Claim>;
    /** Writes outcomes of claimed deliveries, all or none; their claims end. */
    recordAll(outcomes: readonly AttemptOutcome[]): Promise<void>;
    /** Claims whose attempt ended without an outcome (it threw): their deliveries are due again. */
    release(deliveryIds: readonly string[], now: number): Promise<void>;
    /** Something other than the journal made a webhook's deliveries due (a redelivery, a ping, enabled again). */
    touched(webhookId: string): void;
    /** The dispatcher lets go of a webhook (disabled, deleted or gone): what is held of it in memory goes. */
    forget(webhookId: string): void;
    /** The dispatcher stopped: claims it holds and did not start are let go. */
    letGo(now: number): Promise<void>;
    /** When the next pending delivery not yet due falls due; null when none waits. */
    nextDueAfter(now: number): Promise<number | null>;
    /** Ends every pending delivery of a webhook as cancelled, with the reason; returns how many. */
    cancelPending(webhookId: string, reason: string, now: number): Promise<number>;
    /** How many of the webhook's most recent finished deliveries died in a row. */
    deadStreak(webhookId: string, window: number): Promise<number>;
    /**
     * Before writing again after a failure: on a disk that was full, the space freed must go to a
     * checkpoint (which lets the log be reused) before the log grows into it.
     */
    makeRoom(): void;
}
