import { randomBytes, randomUUID } from "crypto";

import { Webhook, WebhookInput } from "../contracts";
import { WebhookIndex } from "../events/webhook-index";
import { WebhookStore } from "../store/webhook-store";
import { WriteBatcher } from "../store/write-batcher";

/** A change the register refuses because of a register-wide limit; the message names the limit. */
export class RegisterLimitError extends Error {}

/** Told of every committed change to the register, after the listener's index follows it. */
export interface RegisterObserver {
    /** A webhook created, restored or changed; `enabledAgain` when a disabled one was enabled, so that its waiting deliveries go out. */
    changed(webhook: Webhook, enabledAgain: boolean): void;
    removed(id: string): void;
}

const NO_OBSERVER: RegisterObserver = { changed: () => undefined, removed: () => undefined };

export interface WebhookPage {
    webhooks: Webhook[];
    totalCount: number;
}

/**
 * The register's operations. Every write is committed (group commit) before it is answered, and
 * the listener's in-memory index follows each committed change.
 */
export class WebhookRegister {
    public constructor(
        private readonly store: WebhookStore,
        private readonly writes: WriteBatcher,
        private readonly index: WebhookIndex,
        private readonly observer: RegisterObserver = NO_OBSERVER,
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
        const now = Date.now();
        const webhook: Webhook = {
            ...input,
            id: randomUUID(),
            token: randomBytes(32).toString("hex"),
            createdAt: now,
            updatedAt: now,
        };
        this.assertFits(webhook);
        await this.writes.run(() => this.store.insert(webhook));
        this.index.put(webhook);
        this.observer.changed(webhook, false);
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
        added.forEach((webhook) => this.observer.changed(webhook, false));
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
            return { next, enabledAgain: next.enabled && !current.enabled };
        });
        if (change) {
            this.index.put(change.next);
            this.observer.changed(change.next, change.enabledAgain);
        }
        return change?.next;
    }

    /** true when this call changed the webhook's state (it exists and was the other way). */
    public async setEnabled(id: string, enabled: boolean): Promise<boolean> {
        const current = this.store.findById(id);
        if (!current || current.enabled === enabled) {
            return false;
        }
        return (await this.update(id, { enabled })) !== undefined;
    }

    private assertFits(webhook: Webhook): void {
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
