import { Webhook } from "../contracts";

/**
 * The register every relay shares (PostgreSQL, storage.driver "postgres"). Changes are written
 * there first; each relay's own SQLite copy, index and engine follow it (WebhookRegister.follow).
 */
export interface SharedRegisterStore {
    insert(webhook: Webhook): Promise<void>;
    /**
     * Applies `change` to the webhook as it is in the shared register, under its row lock, so that
     * two relays changing one webhook at once both take effect; undefined when none has that id.
     */
    update(
        id: string,
        change: (current: Webhook) => Webhook,
    ): Promise<{ previous: Webhook; next: Webhook } | undefined>;
    delete(id: string): Promise<boolean>;
    /** Adds those whose id is not there yet; returns the ones added. */
    insertMissing(webhooks: readonly Webhook[]): Promise<Webhook[]>;
    all(): Promise<Webhook[]>;
    find(id: string): Promise<Webhook | undefined>;
}

/** The shared register could not be reached or written; the message says why, for a 503. */
export class SharedRegisterError extends Error {}

/** The shared register is not the one this relay followed, and its policy refuses it (an operator's decision). */
export class RegisterRefusedError extends SharedRegisterError {}
