import { RegisterState } from "../contracts";
import { followedRegister, importDone, markFollowedRegister, markImportDone } from "../store/imports";
import { WebhookStore } from "../store/webhook-store";
import { SharedDeliveryService } from "../webhooks/delivery-service";
import { RegisterDriver, RegisterParts } from "../webhooks/register-driver";
import { RegisterRefusedError } from "../webhooks/shared-register";
import { SharedWebhookRegister } from "../webhooks/shared-webhook-register";
import { PostgresDeliveries } from "./postgres-deliveries";
import { PostgresRegister } from "./postgres-register";
import { RegisterFollower } from "./register-follower";
import { decideOnSharedRegister } from "./register-identity";
import { connectionConfig, PostgresOptions } from "./shared-database";

// Another relay under this relay's name said it was alive this recently: two relays share a name.
// Relays say it every 10 s (the follower's check of the shared register).
const DUPLICATE_NAME_WINDOW_MS = 25_000;
// The first start with a shared register moves this relay's own webhooks into it, once.
const MOVED_INTO_SHARED = "sqlite-register-into-postgres";

export interface SharedRegisterSetup {
    postgres: PostgresOptions & {
        relayName: string;
        unknownRegister: Parameters<typeof decideOnSharedRegister>[0]["policy"];
    };
    log: (level: "info" | "warning" | "error", message: string) => void;
}

/**
 * storage.driver "postgres": the register and outbox every relay shares. Writes go to PostgreSQL
 * first; this relay's file keeps a copy of the register that follows it (RegisterFollower), which
 * the listener and the engine read, and the deliveries its journal gives until they are forwarded.
 */
export class SharedRegisterDriver implements RegisterDriver {
    public readonly register: SharedWebhookRegister;
    public readonly deliveries: SharedDeliveryService;
    public readonly relayName: string;
    private readonly shared: PostgresRegister;
    private readonly sharedDeliveries: PostgresDeliveries;
    private follower: RegisterFollower | undefined;
    /** Another relay runs under this relay's name, as last seen (see announceRelay). */
    private duplicateRelayName: string | undefined;

    public constructor(
        private readonly parts: RegisterParts,
        private readonly setup: SharedRegisterSetup,
    ) {
        this.relayName = setup.postgres.relayName;
        this.shared = new PostgresRegister(setup.postgres);
        this.register = new SharedWebhookRegister(
            new WebhookStore(parts.db),
            parts.writes,
            parts.index,
            parts.observer,
            this.shared,
            parts.onRefused,
        );
        this.sharedDeliveries = new PostgresDeliveries(setup.postgres, this.shared.relay);
        this.deliveries = new SharedDeliveryService(parts.outbox, parts.resume, parts.pings, this.sharedDeliveries);
    }

    /** ARK's register is imported into the shared one once it is reached (see connect). */
    public async open(): Promise<void> {}

    /**
     * Follows the shared register from now on, and waits (at most the connection timeout) for the
     * first full read, so that the first requests already see every relay's webhooks. A database
     * out of reach does not stop the relay: it serves its own copy meanwhile.
     */
    public async connect(importArk: () => Promise<void>): Promise<void> {
        const { shared, register, setup } = this;
        this.follower = new RegisterFollower(connectionConfig(setup.postgres), shared.database, shared.relay, {
            synchronise: async () => {
                await shared.migrate();
                await this.announceRelay();
                await this.meetSharedRegister();
                await this.moveOwnRegisterOnce();
                // Here, not at start: the shared register may be out of reach then, and this is tried again.
                await importArk();
                await register.followAll(await shared.all());
            },
            changed: async (id) => register.follow(id, await shared.find(id)),
            verify: async () => {
                await this.announceRelay();
                const identity = await shared.identity();
                if (identity !== followedRegister(this.parts.db)) {
                    throw new Error(`the shared register (${shared.database}) was replaced (now ${identity})`);
                }
            },
            log: setup.log,
        });
        this.follower.start();
        if (await this.follower.synchronised(setup.postgres.connectionTimeoutMs)) {
            setup.log(
                "info",
                `follows the shared register (${shared.database}): ${register.page(1, 1).totalCount} webhooks`,
            );
        }
    }

    public state(): RegisterState {
        const state = this.follower?.state() ?? { following: false, since: Date.now(), reason: "not started" };
        return {
            driver: "postgres",
            database: this.shared.database,
            ...state,
            duplicateRelayName: this.duplicateRelayName ?? null,
        };
    }

    public async stop(): Promise<void> {
        await this.follower?.stop();
        await this.shared.close();
        await this.sharedDeliveries.close();
    }

    /**
     * Says this relay is alive under its name, each time it looks at the shared register (every
     * 10 s), and tells at error level, once, when another relay was alive under the same name.
     */
    private async announceRelay(): Promise<void> {
        const { relayName, shared, setup } = this;
        const seen = await shared.announce(relayName, shared.relay, Date.now(), DUPLICATE_NAME_WINDOW_MS);
        if (seen === undefined) {
            if (this.duplicateRelayName !== undefined) {
                setup.log("info", `no other relay runs under the name "${relayName}" now`);
            }
            this.duplicateRelayName = undefined;
            return;
        }
        if (this.duplicateRelayName === undefined) {
            this.duplicateRelayName = `another relay runs under the name "${relayName}" (seen at ${new Date(seen).toISOString()}): give each relay its own storage.postgres.relayName`;
            setup.log("error", this.duplicateRelayName);
        }
    }

    /**
     * Decides, each time this relay (re)connects, whether its copy may follow the shared register
     * it finds (register-identity.ts); a refusal keeps the copy and stops every write to that register.
     */
    private async meetSharedRegister(): Promise<void> {
        const { shared, parts, setup } = this;
        const identity = await shared.identity();
        const decision = decideOnSharedRegister({
            identity,
            followed: followedRegister(parts.db),
            movedBefore: importDone(parts.db, MOVED_INTO_SHARED),
            ownWebhooks: this.register.page(1, 1).totalCount,
            sharedWebhooks: await shared.count(),
            policy: setup.postgres.unknownRegister,
            database: shared.database,
        });
        if (decision.kind === "refuse") {
            shared.refuse(decision.reason);
            throw new RegisterRefusedError(decision.reason);
        }
        shared.accept();
        if (decision.kind !== "follow") {
            const added = decision.kind === "offer" ? (await shared.insertMissing(this.register.local())).length : 0;
            setup.log(
                "warning",
                decision.kind === "offer"
                    ? `offered this relay's copy to a shared register it did not follow before (${shared.database}, storage.postgres.unknownRegister "offer"): ${added} webhooks added`
                    : `adopts a shared register it did not follow before (${shared.database}, storage.postgres.unknownRegister "adopt"): this relay's copy is replaced by it`,
            );
        }
        markFollowedRegister(parts.db, identity, Date.now());
    }

    /** The first start with a shared register adds this relay's own webhooks to it (ids kept). */
    private async moveOwnRegisterOnce(): Promise<void> {
        const { shared, parts } = this;
        if (importDone(parts.db, MOVED_INTO_SHARED)) {
            return;
        }
        const own = this.register.local();
        const added = await shared.insertMissing(own);
        markImportDone(parts.db, MOVED_INTO_SHARED, added.length, Date.now());
        if (own.length > 0) {
            this.setup.log(
                "info",
                `moved this relay's register into the shared register (${shared.database}): ${added.length} of ${own.length} webhooks added, the rest were there already`,
            );
        }
    }
}
