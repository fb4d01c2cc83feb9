import { ListenerStats } from "../../events/listener";

export interface ServiceInfo {
    name: string;
    version: string;
}

export class ServiceController {
    public constructor(
        private readonly info: ServiceInfo,
        private readonly listenerStats: ListenerStats,
        private readonly pendingDeliveries: () => number,
    ) {}

    public show() {
        return {
            data: {
                ...this.info,
                listener: { ...this.listenerStats, byEvent: Object.fromEntries(this.listenerStats.byEvent) },
                deliveries: { pending: this.pendingDeliveries() },
            },
        };
    }
}
