import { randomUUID } from "crypto";

import { ChannelListener } from "../cluster/channel-listener";
import { DELIVERIES_CHANNEL, PostgresDeliveries } from "../cluster/postgres-deliveries";
import { PostgresOutbox } from "../cluster/postgres-outbox";
import { connectionConfig } from "../cluster/shared-database";
import { PluginOptions } from "../config/options";
import { Retention } from "../delivery/retention";
import { DeliveryStore } from "../store/delivery-store";
import { Outbox } from "../store/outbox";
import { SqliteOutbox } from "../store/sqlite-outbox";
import { StorageHealth } from "../store/storage-health";

/**
 * What the storage driver runs beside the dispatcher, chosen once (options.storage.driver): the
 * outbox the dispatcher claims from, retention, and the sizes the metrics show.
 */
export interface StorageDriver {
    outbox: Outbox;
    /** `lookAgain` tells the dispatcher that another writer made deliveries due. */
    start(lookAgain: () => void): void;
    /** Stops what runs beside the dispatcher; the dispatcher stops next. */
    stop(): Promise<void>;
    /** After the dispatcher stopped: lets go of the database. */
    close(): Promise<void>;
    /** Pending and dead deliveries, for a scrape: never waits on a database. */
    counts(): { pending: number; dead: number };
}

export interface DriverSetup {
    options: PluginOptions;
    /** This relay's own file's outbox. */
    store: DeliveryStore;
    health: Pick<StorageHealth, "failed">;
    /** A checkpoint of this relay's own file (see Outbox.makeRoom). */
    checkpoint: () => void;
}

const ownCounts = (store: DeliveryStore) => ({ pending: store.pendingCount(), dead: store.deadCount() });

/** storage.driver "sqlite": everything in this relay's file. */
export const sqliteDriver = ({ options, store, health, checkpoint }: DriverSetup): StorageDriver => {
    const retention = new Retention(store, options.delivery.retentionDays, health);
    return {
        outbox: new SqliteOutbox(store, checkpoint),
        start: () => retention.start(),
        stop: async () => retention.stop(),
        close: async () => undefined,
        counts: () => ownCounts(store),
    };
};

// The shared outbox's sizes are read this often for the metrics.
const SHARED_COUNTS_EVERY_MS = 10_000;

/** storage.driver "postgres": the outbox every relay shares, with notices of the work others add. */
export const postgresDriver = ({ options, store, health, checkpoint }: DriverSetup): StorageDriver => {
    const { postgres } = options.storage;
    // Its name says which relay holds a lease; the id, which run of it (a restart holds none of the last run's).
    const shared = new PostgresDeliveries(postgres, `${postgres.relayName} ${randomUUID()}`);
    // This relay's file keeps what is not forwarded yet, and finished rows from before a move to PostgreSQL.
    const retentions = [store, shared].map((outbox) => new Retention(outbox, options.delivery.retentionDays, health));
    let notices: ChannelListener | undefined;
    let sharedCounts = { pending: 0, dead: 0 };
    let countsTimer: NodeJS.Timeout | undefined;
    let stopped = false;
    const countShared = (): void => {
        shared
            .counts()
            .then((counts) => (sharedCounts = counts))
            .catch(() => undefined)
            .finally(() => {
                if (!stopped) {
                    countsTimer = setTimeout(countShared, SHARED_COUNTS_EVERY_MS);
                    countsTimer.unref();
                }
            });
    };
    return {
        outbox: new PostgresOutbox({
            local: store,
            shared,
            // A lease outlives the longest attempt, so that no other relay takes a delivery under way.
            leaseMs: Math.max(postgres.leaseMs, options.delivery.timeoutMs + 1_000),
            attemptMs: options.delivery.timeoutMs,
            checkpoint,
        }),
        start: (lookAgain) => {
            notices = new ChannelListener(connectionConfig(postgres), DELIVERIES_CHANNEL, lookAgain);
            notices.start();
            retentions.forEach((retention) => retention.start());
            countShared();
        },
        stop: async () => {
            stopped = true;
            clearTimeout(countsTimer);
            retentions.forEach((retention) => retention.stop());
            await notices?.stop();
        },
        close: () => shared.close(),
        counts: () => {
            const own = ownCounts(store);
            return { pending: own.pending + sharedCounts.pending, dead: own.dead + sharedCounts.dead };
        },
    };
};
