import { JournalDamage, OriginLoad, RegisterState, SpoolStats, StorageState } from "../../contracts";
import { ListenerStats } from "../../events/listener";

export interface ServiceInfo {
    name: string;
    version: string;
}

/** What `GET /api` reports beside the listener's counters; each read may fail while the file does. */
export interface ServiceProbes {
    storage: () => StorageState;
    /** The register's driver and, when it is shared, whether this relay follows it. */
    register: () => RegisterState;
    spool: () => SpoolStats;
    pendingDeliveries: () => number;
    journalBacklog: () => number;
    /** Each receiver origin's adaptive concurrency, attempts under way and latency, from the delivery engine. */
    origins: () => Promise<OriginLoad[]>;
    /** Whether the delivery engine's thread runs, and how often it was started again. */
    engine: () => { running: boolean; restarts: number };
    /** Journal records the engine found damaged and passed over since start. */
    journalDamage: () => JournalDamage;
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

    public async show() {
        const origins = await this.probes.origins();
        return {
            data: {
                ...this.info,
                storage: { ...this.probes.storage(), spool: this.probes.spool(), register: this.probes.register() },
                listener: {
                    ...this.listenerStats,
                    byEvent: Object.fromEntries(this.listenerStats.byEvent),
                    journaledByEvent: Object.fromEntries(this.listenerStats.journaledByEvent),
                },
                deliveries: {
                    pending: orNull(this.probes.pendingDeliveries),
                    journaled: orNull(this.probes.journalBacklog),
                    journalDamaged: this.probes.journalDamage(),
                    engine: this.probes.engine(),
                    origins,
                },
            },
        };
    }
}
