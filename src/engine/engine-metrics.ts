import { Counter, Gauge, Histogram, Registry } from "prom-client";

import { DeliveryStatus, OriginLoad } from "../contracts";

export interface EngineProbes {
    pending: () => number;
    dead: () => number;
    origins: () => OriginLoad[];
}

// Seconds, from a loopback receiver's millisecond to a receiver at the timeout's edge.
const ATTEMPT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The engine's half of `GET /metrics`, in the engine's thread: outcomes and attempt durations are
 * counted as they happen there; the queue's sizes and each origin's limits are read at scrape time.
 */
export class EngineMetrics {
    public readonly registry = new Registry();
    private readonly outcomes: Counter<"outcome">;
    private readonly durations: Histogram;

    public constructor(probes: EngineProbes) {
        const registers = [this.registry];
        this.outcomes = new Counter({
            name: "core_wallet_webhooks_delivery_attempts_total",
            help: "Delivery attempts by the delivery's state after them: delivered, pending (a retry is scheduled), failed, dead",
            labelNames: ["outcome"],
            registers,
        });
        this.durations = new Histogram({
            name: "core_wallet_webhooks_attempt_duration_seconds",
            help: "Duration of delivery attempts, from signing to the receiver's answer read",
            buckets: ATTEMPT_BUCKETS,
            registers,
        });
        new Gauge({
            name: "core_wallet_webhooks_deliveries_pending",
            help: "Deliveries owed and not yet delivered (due now or later)",
            registers,
            collect() {
                this.set(probes.pending());
            },
        });
        new Gauge({
            name: "core_wallet_webhooks_deliveries_dead",
            help: "Deliveries that used every attempt and are kept within the retention",
            registers,
            collect() {
                this.set(probes.dead());
            },
        });
        const originGauge = (name: string, help: string, read: (origin: OriginLoad) => number | null) =>
            new Gauge({
                name,
                help,
                labelNames: ["origin"],
                registers,
                collect() {
                    this.reset();
                    for (const origin of probes.origins()) {
                        const value = read(origin);
                        if (value !== null) {
                            this.set({ origin: origin.origin }, value);
                        }
                    }
                },
            });
        originGauge(
            "core_wallet_webhooks_origin_concurrency",
            "Attempts each receiver origin may have under way now (adaptive)",
            (origin) => origin.concurrency,
        );
        originGauge(
            "core_wallet_webhooks_origin_in_flight",
            "Attempts under way to each receiver origin",
            (origin) => origin.inFlight,
        );
        originGauge(
            "core_wallet_webhooks_origin_latency_seconds",
            "Smoothed duration of each receiver origin's recent attempts",
            (origin) => (origin.latencyMs === null ? null : origin.latencyMs / 1000),
        );
    }

    public attempted(outcome: DeliveryStatus, durationMs: number): void {
        this.outcomes.inc({ outcome });
        this.durations.observe(durationMs / 1000);
    }

    public async text(): Promise<string> {
        return this.registry.metrics();
    }
}
