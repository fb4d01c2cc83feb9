import { OriginLoad, SpoolStats, StorageState } from "../../contracts";
import { ListenerStats } from "../../events/listener";

export interface ServiceInfo {
    name: string;
    version: string;
}

/** What `GET /api` reports beside the listener's counters; each read may fail while the file does. */
export interface ServiceProbes {
    storage: () => StorageState;
    spool: () => SpoolStats;
    pendingDeliveries: () => number;
    journalBacklog: () => number;
    /** Each receiver origin's adaptive concurrency, attempts under way and latency. */
    origins: () => OriginLoad[];
}

const orNull = (read: () => number): number | null => {
    try {
        return read();
    } catch {
        return null;
    }
};

export class ServiceController {
    public constructor(
        private readonly info: ServiceInfo,
        private readonly listenerStats: ListenerStats,
        private readonly probes: ServiceProbes,
    ) {}

    public show() {
        return {
            data: {
                ...this.info,
                storage: { ...this.probes.storage(), spool: this.probes.spool() },
                listener: { ...this.listenerStats, byEvent: Object.fromEntries(this.listenerStats.byEvent) },
                deliveries: {
                    pending: orNull(this.probes.pendingDeliveries),
                    journaled: orNull(this.probes.journalBacklog),
                    origins: this.probes.origins(),
                },
            },
        };
    }
}
