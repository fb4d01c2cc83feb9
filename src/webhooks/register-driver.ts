import { RegisterState, Webhook } from "../contracts";
import { WebhookIndex } from "../events/webhook-index";
import { DeliveryStore } from "../store/delivery-store";
import { SqliteDatabase } from "../store/database";
import { WebhookStore } from "../store/webhook-store";
import { WriteBatcher } from "../store/write-batcher";
import { DeliveryService } from "./delivery-service";
import { PingLimiter } from "./ping-limiter";
import { RegisterObserver, WebhookRegister } from "./webhook-register";

/** What every register driver is built from: this relay's file and the plugin's parts. */
export interface RegisterParts {
    db: SqliteDatabase;
    writes: WriteBatcher;
    index: WebhookIndex;
    observer: RegisterObserver;
    outbox: DeliveryStore;
    /** Tells the dispatcher an operator made one of the webhook's deliveries due now. */
    resume: (webhookId: string) => void;
    pings: PingLimiter;
    /** A webhook left out of the index: its conditions do not compile. */
    onRefused: (webhook: Webhook, reason: string) => void;
}

/**
 * Where the register and the deliveries the API shows live (options.storage.driver), chosen once
 * where the plugin is composed: this relay's file (LocalRegisterDriver), or the register and
 * outbox every relay shares (cluster/shared-register-driver.ts).
 */
export interface RegisterDriver {
    readonly register: WebhookRegister;
    readonly deliveries: DeliveryService;
    /** The relay's name, which the delivery ids of a shared outbox carry; undefined with one relay. */
    readonly relayName: string | undefined;
    /** Before the index is loaded: `importArk` imports ARK's register once, when there is one. */
    open(importArk: () => Promise<void>): Promise<void>;
    /** Once the engine runs: what the register needs from then on (a shared one is followed). */
    connect(importArk: () => Promise<void>): Promise<void>;
    state(): RegisterState;
    stop(): Promise<void>;
}

/** storage.driver "sqlite": the register and the outbox in this relay's file. */
export class LocalRegisterDriver implements RegisterDriver {
    public readonly register: WebhookRegister;
    public readonly deliveries: DeliveryService;
    public readonly relayName = undefined;

    public constructor(parts: RegisterParts) {
        this.register = new WebhookRegister(new WebhookStore(parts.db), parts.writes, parts.index, parts.observer);
        this.deliveries = new DeliveryService(parts.outbox, parts.resume, parts.pings);
    }

    public open(importArk: () => Promise<void>): Promise<void> {
        return importArk();
    }

    public async connect(): Promise<void> {}

    public state(): RegisterState {
        return { driver: "sqlite" };
    }

    public async stop(): Promise<void> {}
}
