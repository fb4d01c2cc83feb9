import { Client, ClientConfig, Notification } from "pg";

import { RegisterRefusedError } from "../webhooks/shared-register";
import { REGISTER_CHANNEL } from "./postgres-register";

export interface FollowerHandlers {
    /** Listening again: changes made meanwhile were not heard, so the whole register is read. */
    synchronise(): Promise<void>;
    /** A relay changed this webhook in the shared register. */
    changed(id: string): Promise<void>;
    /** Fails when the shared register is no longer the one followed (dropped, replaced): it is then met again. */
    verify(): Promise<void>;
    log(level: "info" | "warning" | "error", message: string): void;
}

/** Whether this relay follows the shared register now, for `GET /api`. */
export interface FollowerState {
    following: boolean;
    /** Since when it follows, or since when it does not (ms since the epoch). */
    since: number;
    /** Why it does not, while it does not. */
    reason: string | null;
}

const RETRY_FIRST_MS = 1_000;
// A try is one connection; at 30 s a relay said `following: false` for up to half a minute after PostgreSQL was back.
const RETRY_MAX_MS = 5_000;
// A schema dropped under a listening connection says nothing to it: the register is asked who it is this often.
const VERIFY_EVERY_MS = 10_000;

const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Keeps this relay's copy of the shared register in step: one connection of its own LISTENs to the
 * register's channel, and each notice is applied in the order it came. When the connection breaks,
 * or a notice cannot be applied, it connects again with a growing delay and reads everything.
 */
export class RegisterFollower {
    private client: Client | undefined;
    private queue: Promise<void> = Promise.resolve();
    private failures = 0;
    private timer: NodeJS.Timeout | undefined;
    private verifier: NodeJS.Timeout | undefined;
    private stopped = false;
    private current: FollowerState = { following: false, since: Date.now(), reason: "connecting" };
    private markSynchronised: () => void = () => undefined;
    private readonly firstSynchronised = new Promise<void>((resolve) => (this.markSynchronised = resolve));

    public constructor(
        private readonly config: ClientConfig,
        private readonly database: string,
        /** This relay's name in the notices (PostgresRegister.relay). */
        private readonly relay: string,
        private readonly handlers: FollowerHandlers,
    ) {}

    public state(): FollowerState {
        return { ...this.current };
    }

    public start(): void {
        void this.connect();
    }

    /** Waits for the first full read of the register, at most `timeoutMs`; false when it did not come. */
    public async synchronised(timeoutMs: number): Promise<boolean> {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
        try {
            return await Promise.race([this.firstSynchronised.then(() => true), timeout]);
        } finally {
            clearTimeout(timer);
        }
    }

    public async stop(): Promise<void> {
        this.stopped = true;
        clearTimeout(this.timer);
        clearInterval(this.verifier);
        const client = this.client;
        this.client = undefined;
        if (client) {
            await this.close(client);
        }
        await this.queue;
    }

    private async connect(): Promise<void> {
        if (this.stopped) {
            return;
        }
        const client = new Client(this.config);
        this.client = client;
        client.on("error", (error: Error) => this.lost(client, error));
        client.on("end", () => this.lost(client, new Error("the connection ended")));
        client.on("notification", (notice: Notification) => this.heard(client, notice));
        try {
            await client.connect();
            await client.query(`LISTEN ${REGISTER_CHANNEL}`);
            await this.apply(client, () => this.handlers.synchronise());
        } catch (error) {
            this.lost(client, error);
            return;
        }
        if (this.client !== client) {
            return;
        }
        if (this.failures > 0) {
            this.handlers.log("info", `follows the shared register (${this.database}) again`);
        }
        this.current = { following: true, since: Date.now(), reason: null };
        this.failures = 0;
        this.markSynchronised();
        clearInterval(this.verifier);
        this.verifier = setInterval(
            () =>
                void this.apply(client, () => this.handlers.verify()).catch((error: unknown) =>
                    this.lost(client, error),
                ),
            VERIFY_EVERY_MS,
        );
    }

    private heard(client: Client, notice: Notification): void {
        if (notice.channel !== REGISTER_CHANNEL || !notice.payload) {
            return;
        }
        let id: unknown;
        let relay: unknown;
        try {
            ({ id, relay } = JSON.parse(notice.payload) as { id?: unknown; relay?: unknown });
        } catch {
            return; // not one of ours
        }
        // This relay's own changes were applied when they were made.
        if (typeof id === "string" && relay !== this.relay) {
            this.apply(client, () => this.handlers.changed(id as string)).catch((error: unknown) =>
                this.lost(client, error),
            );
        }
    }

    /** Runs after every change heard before it: a webhook's later state never loses to an earlier one. */
    private apply(client: Client, work: () => Promise<void>): Promise<void> {
        const next = this.queue.then(() => (this.client === client ? work() : undefined));
        this.queue = next.catch(() => undefined);
        return next;
    }

    private lost(client: Client, error: unknown): void {
        if (this.client !== client) {
            return; // this connection's end was already handled
        }
        this.client = undefined;
        clearInterval(this.verifier);
        void this.close(client);
        if (this.stopped) {
            return;
        }
        this.failures++;
        if (this.current.following || this.current.reason === "connecting") {
            this.current = { following: false, since: Date.now(), reason: reasonOf(error) };
        } else {
            this.current = { ...this.current, reason: reasonOf(error) };
        }
        const wait = Math.min(RETRY_FIRST_MS * 2 ** (this.failures - 1), RETRY_MAX_MS);
        // Said at the 1st, 2nd, 4th, 8th... failure in a row: an outage of hours is a few lines.
        if ((this.failures & (this.failures - 1)) === 0) {
            this.handlers.log(
                error instanceof RegisterRefusedError ? "error" : "warning",
                `cannot follow the shared register (${this.database}): ${reasonOf(error)}; this relay serves its own copy and tries again in ${wait / 1000} s (failure ${this.failures} in a row)`,
            );
        }
        this.timer = setTimeout(() => void this.connect(), wait);
    }

    private async close(client: Client): Promise<void> {
        client.removeAllListeners();
        client.on("error", () => undefined);
        await client.end().catch(() => undefined);
    }
}
