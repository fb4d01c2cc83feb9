import { randomBytes, randomUUID } from "crypto";

import { Webhook, WebhookInput } from "../contracts";
import { WebhookIndex } from "../events/webhook-index";
import { WebhookStore } from "../store/webhook-store";
import { WriteBatcher } from "../store/write-batcher";

/** A change the register refuses because of a register-wide limit; the message names the limit. */
export class RegisterLimitError extends Error {}

/** Told of every committed change to the register, after the listener's index follows it. */
export interface RegisterObserver {
    /** A webhook created, restored or changed (the delivery engine sends what an enabled one owes). */
    changed(webhook: Webhook): void;
    removed(id: string): void;
}

const NO_OBSERVER: RegisterObserver = { changed: () => undefined, removed: () => undefined };

export interface WebhookPage {
    webhooks: Webhook[];
    totalCount: number;
}

/**
 * The register's operations, in this relay's file (storage.driver "sqlite"; SharedWebhookRegister
 * writes to the register relays share). Every write is committed (group commit) before it is
 * answered, and the listener's in-memory index follows each committed change. Reads are answered
 * from this relay's file.
 */
export class WebhookRegister {
    public constructor(
        protected readonly store: WebhookStore,
        protected readonly writes: WriteBatcher,
        protected readonly index: WebhookIndex,
        protected readonly observer: RegisterObserver = NO_OBSERVER,
    ) {}

    /**
     * Loads every webhook into the listener's index; called once at start. A webhook whose
     * conditions do not compile (stored by a version that validated less) is left out, and said.
     */
    public loadIndex(onRefused: (webhook: Webhook, reason: string) => void): void {
        for (const webhook of this.store.all()) {
            try {
                this.index.put(webhook);
            } catch (error) {
                onRefused(webhook, error instanceof Error ? error.message : String(error));
            }
        }
    }

    /** One page (1-based) of the register, oldest first. */
    public page(page: number, limit: number): WebhookPage {
        return { webhooks: this.store.page((page - 1) * limit, limit), totalCount: this.store.count() };
    }

    public find(id: string): Webhook | undefined {
        return this.store.findById(id);
    }

    public async create(input: WebhookInput): Promise<Webhook> {
        const webhook = this.newWebhook(input);
        await this.writes.run(() => this.store.insert(webhook));
        this.index.put(webhook);
        this.observer.changed(webhook);
        return webhook;
    }

    /** A new webhook of the input, with its id and token; RegisterLimitError when it does not fit. */
    protected newWebhook(input: WebhookInput): Webhook {
        const now = Date.now();
        const webhook: Webhook = {
            ...input,
            id: randomUUID(),
            token: randomBytes(32).toString("hex"),
            createdAt: now,
            updatedAt: now,
        };
        this.assertFits(webhook);
        return webhook;
    }

    /**
     * Adds webhooks that keep their id and token (the import of ARK's register), skipping ids already
     * present and refusing, with the reason, those over a register-wide limit; `alsoInTransaction`
     * commits with them, so an import is recorded exactly when it lands.
     */
    public async restore(
        webhooks: readonly Webhook[],
        alsoInTransaction: () => void,
    ): Promise<{ added: Webhook[]; refused: Array<{ id: string; reason: string }> }> {
        const added: Webhook[] = [];
        const refused: Array<{ id: string; reason: string }> = [];
        try {
            await this.writes.run(() => {
                for (const webhook of webhooks) {
                    if (this.store.findById(webhook.id)) {
                        continue;
                    }
                    const overflow = this.index.regexpOverflow(webhook);
                    if (overflow) {
                        refused.push({ id: webhook.id, reason: overflow });
                        continue;
                    }
                    this.store.insert(webhook);
                    // Indexed at once, so that the next one is checked against this one's patterns too.
                    this.index.put(webhook);
                    added.push(webhook);
                }
                alsoInTransaction();
            });
        } catch (error) {
            added.forEach((webhook) => this.index.remove(webhook.id));
            throw error;
        }
        added.forEach((webhook) => this.observer.changed(webhook));
        return { added, refused };
    }

    /** Returns undefined when no webhook has that id. */
    public async update(id: string, changes: Partial<WebhookInput>): Promise<Webhook | undefined> {
        const change = await this.writes.run(() => {
            const current = this.store.findById(id);
            if (!current) {
                return undefined;
            }
            const next: Webhook = { ...current, ...changes, updatedAt: Date.now() };
            this.assertFits(next);
            this.store.update(next);
            return next;
        });
        if (change) {
            this.index.put(change);
            this.observer.changed(change);
        }
        return change;
    }

    /** true when this call changed the webhook's state (it exists and was the other way). */
    public async setEnabled(id: string, enabled: boolean): Promise<boolean> {
        const current = this.store.findById(id);
        if (!current || current.enabled === enabled) {
            return false;
        }
        return (await this.update(id, { enabled })) !== undefined;
    }

    protected assertFits(webhook: Webhook): void {
        const overflow = this.index.regexpOverflow(webhook);
        if (overflow) {
            throw new RegisterLimitError(overflow);
        }
    }

    public async delete(id: string): Promise<boolean> {
        const deleted = await this.writes.run(() => this.store.delete(id));
        if (deleted) {
            this.index.remove(id);
            this.observer.removed(id);
        }
        return deleted;
    }
}
