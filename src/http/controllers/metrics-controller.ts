import Hapi from "@hapi/hapi";
import { Counter, Gauge, Registry } from "prom-client";

import { JournalDamage, SpoolStats, StorageState } from "../../contracts";
import { ListenerStats } from "../../events/listener";

/** What the node's thread knows: the listener, the journal, the storage and the engine's thread. */
export interface NodeThreadProbes {
    listener: ListenerStats;
    journalBacklog: () => number;
    spool: () => SpoolStats;
    storage: () => StorageState;
    engine: () => { running: boolean; restarts: number };
    journalDamage: () => JournalDamage;
    /** The engine's own metrics, in Prometheus text, from its thread. */
    engineMetrics: () => Promise<string>;
}

const PREFIX = "core_wallet_webhooks_";

/** A counter read from a running total at scrape time: nothing is counted twice on the listener's path. */
const totalOf = (registry: Registry, name: string, help: string, read: () => number): void => {
    new Counter({
        name: `${PREFIX}${name}`,
        help,
        registers: [registry],
        collect() {
            this.reset();
            this.inc(read());
        },
    });
};

const totalsByEvent = (registry: Registry, name: string, help: string, read: () => Map<string, number>): void => {
    new Counter({
        name: `${PREFIX}${name}`,
        help,
        labelNames: ["event"],
        registers: [registry],
        collect() {
            this.reset();
            read().forEach((count, event) => this.inc({ event }, count));
        },
    });
};

const gaugeOf = (registry: Registry, name: string, help: string, read: () => number): void => {
    new Gauge({
        name: `${PREFIX}${name}`,
        help,
        registers: [registry],
        collect() {
            this.set(read());
        },
    });
};

/**
 * `GET /metrics` in Prometheus text (prom-client): the node's thread's figures, read at scrape
 * time from the counters the listener keeps anyway, followed by the delivery engine's, which its
 * thread renders.
 */
export class MetricsController {
    private readonly registry = new Registry();

    public constructor(private readonly probes: NodeThreadProbes) {
        const { registry } = this;
        const { listener } = probes;
        totalsByEvent(
            registry,
            "events_seen_total",
            "Kernel events seen by the listener, by name",
            () => listener.byEvent,
        );
        totalsByEvent(
            registry,
            "events_journaled_total",
            "Kernel events journaled for delivery (some enabled webhook listens to the name), by name",
            () => listener.journaledByEvent,
        );
        totalOf(
            registry,
            "deliveries_queued_total",
            "Deliveries owed by the listener's matching (conditions tested later are counted by the engine)",
            () => listener.deliveriesQueued,
        );
        totalOf(registry, "listener_errors_total", "Events the listener failed to journal", () => listener.errors);
        gaugeOf(registry, "journal_backlog", "Journaled events not yet expanded into deliveries", () =>
            probes.journalBacklog(),
        );
        gaugeOf(
            registry,
            "spool_events",
            "Events held in memory while the file refuses writes",
            () => probes.spool().events,
        );
        totalOf(
            registry,
            "spool_dropped_total",
            "Events lost because the spool was full",
            () => probes.spool().dropped,
        );
        gaugeOf(registry, "storage_degraded", "1 while the database file refuses writes", () =>
            probes.storage().state === "degraded" ? 1 : 0,
        );
        totalOf(
            registry,
            "journal_damaged_records_total",
            "Journal records found damaged (wrong length or checksum) and passed over; their events are lost",
            () => probes.journalDamage().records,
        );
        gaugeOf(registry, "engine_up", "1 while the delivery engine's thread runs", () =>
            probes.engine().running ? 1 : 0,
        );
        totalOf(
            registry,
            "engine_restarts_total",
            "Times the delivery engine's thread died and was started again",
            () => probes.engine().restarts,
        );
    }

    public async show(h: Hapi.ResponseToolkit): Promise<Hapi.ResponseObject> {
        const [own, engine] = await Promise.all([this.registry.metrics(), this.probes.engineMetrics()]);
        return h.response(`${own}${engine}`).type(this.registry.contentType);
    }
}
