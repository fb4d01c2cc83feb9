import { randomBytes, randomUUID } from "crypto";

import { Webhook, WebhookInput } from "../contracts";
import { WebhookIndex } from "../events/webhook-index";
import { WebhookStore } from "../store/webhook-store";
import { WriteBatcher } from "../store/write-batcher";
import { SharedRegisterStore } from "./shared-register";

/** A change the register refuses because of a register-wide limit; the message names the limit. */
export class RegisterLimitError extends Error {}

// Webhooks of the shared register applied to this relay's copy per turn of the event loop.
const FOLLOW_SLICE = 100;
// Ids read or gathered per turn while comparing the copy with the shared register.
const ID_SLICE = 5_000;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

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

const sameWebhook = (left: Webhook, right: Webhook): boolean =>
    left.event === right.event &&
    left.target === right.target &&
    left.enabled === right.enabled &&
    left.match === right.match &&
    left.token === right.token &&
    left.updatedAt === right.updatedAt &&
    JSON.stringify(left.conditions) === JSON.stringify(right.conditions);

/**
 * The register's operations. Every write is committed (group commit) before it is answered, and
 * the listener's in-memory index follows each committed change. With a shared register (several
 * relays on one PostgreSQL), a write goes there first and is answered once committed there; this
 * relay's SQLite copy follows at once, and the other relays' copies when they are told
 * (`follow`). Reads are answered from this relay's copy.
 */
export class WebhookRegister {
    /**
     * Copies of one webhook's shared state are applied one at a time, in the order they came;
     * those of different webhooks at once (their local writes share a transaction).
     */
    private readonly following = new Map<string, Promise<void>>();

    public constructor(
        private readonly store: WebhookStore,
        private readonly writes: WriteBatcher,
        private readonly index: WebhookIndex,
        private readonly observer: RegisterObserver = NO_OBSERVER,
        private readonly shared?: SharedRegisterStore,
        private readonly onRefused: (webhook: Webhook, reason: string) => void = () => undefined,
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
        if (this.shared) {
            await this.shared.insert(webhook);
            await this.follow(webhook.id, webhook);
            return webhook;
        }
        await this.writes.run(() => this.store.insert(webhook));
        this.index.put(webhook);
        this.observer.changed(webhook);
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
        if (this.shared) {
            return this.restoreShared(webhooks, alsoInTransaction);
        }
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

    private async restoreShared(
        webhooks: readonly Webhook[],
        alsoInTransaction: () => void,
    ): Promise<{ added: Webhook[]; refused: Array<{ id: string; reason: string }> }> {
        const refused: Array<{ id: string; reason: string }> = [];
        const fitting = webhooks.filter((webhook) => {
            const overflow = this.index.regexpOverflow(webhook);
            if (overflow) {
                refused.push({ id: webhook.id, reason: overflow });
            }
            return overflow === undefined;
        });
        const added = await (this.shared as SharedRegisterStore).insertMissing(fitting);
        for (const webhook of added) {
            await this.follow(webhook.id, webhook);
        }
        await this.writes.run(alsoInTransaction);
        return { added, refused };
    }

    /** Returns undefined when no webhook has that id. */
    public async update(id: string, changes: Partial<WebhookInput>): Promise<Webhook | undefined> {
        if (this.shared) {
            const change = await this.shared.update(id, (current) => {
                const next: Webhook = {
                    ...current,
                    ...changes,
                    updatedAt: Math.max(Date.now(), current.updatedAt + 1),
                };
                this.assertFits(next);
                return next;
            });
            if (change) {
                await this.follow(id, change.next);
            }
            return change?.next;
        }
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

    private assertFits(webhook: Webhook): void {
        const overflow = this.index.regexpOverflow(webhook);
        if (overflow) {
            throw new RegisterLimitError(overflow);
        }
    }

    /**
     * Makes this relay's copy of one webhook what the shared register holds (undefined: it is gone
     * there), and tells the index and the engine. A state older than the copy's (read before a
     * change this relay already applied) is passed over: the change's own notice follows it.
     */
    public follow(id: string, webhook: Webhook | undefined): Promise<void> {
        const next = (this.following.get(id) ?? Promise.resolve()).then(() => this.followNow(id, webhook));
        const settled = next.catch(() => undefined);
        this.following.set(id, settled);
        void settled.then(() => {
            if (this.following.get(id) === settled) {
                this.following.delete(id);
            }
        });
        return next;
    }

    /**
     * Makes this relay's copy the shared register's whole state: every webhook there, none other.
     * A slice of webhooks a turn of the event loop, each slice's writes one transaction: a register
     * of 20,000 applied in one turn held the node's loop for half a second.
     */
    public async followAll(webhooks: readonly Webhook[]): Promise<void> {
        const kept = new Set<string>();
        for (let start = 0; start < webhooks.length; start += ID_SLICE) {
            webhooks.slice(start, start + ID_SLICE).forEach((webhook) => kept.add(webhook.id));
            await nextTurn();
        }
        const gone: string[] = [];
        for (let after = 0; ; ) {
            const ids = this.store.idsAfter(after, ID_SLICE);
            if (ids.length === 0) {
                break;
            }
            gone.push(...ids.filter(({ id }) => !kept.has(id)).map(({ id }) => id));
            after = ids[ids.length - 1].seq;
            await nextTurn();
        }
        for (let start = 0; start < gone.length; start += FOLLOW_SLICE) {
            await Promise.all(gone.slice(start, start + FOLLOW_SLICE).map((id) => this.follow(id, undefined)));
            await nextTurn();
        }
        for (let start = 0; start < webhooks.length; start += FOLLOW_SLICE) {
            await Promise.all(
                webhooks.slice(start, start + FOLLOW_SLICE).map((webhook) => this.follow(webhook.id, webhook)),
            );
            // A slice with nothing to write settles within the turn: yield anyway.
            await nextTurn();
        }
    }

    /** Every webhook of this relay's copy (the first move of a register into a shared one). */
    public local(): Webhook[] {
        return [...this.store.all()];
    }

    private async followNow(id: string, webhook: Webhook | undefined): Promise<void> {
        const current = this.store.findById(id);
        if (!webhook) {
            // The shared register holds it durably: the copy follows at commit, index and all.
            if (current && (await this.writes.run(() => this.store.delete(id), { durable: false }))) {
                this.index.remove(id);
                this.observer.removed(id);
            }
            return;
        }
        if (current && (current.updatedAt > webhook.updatedAt || sameWebhook(current, webhook))) {
            return;
        }
        await this.writes.run(() => this.store.upsert(webhook), { durable: false });
        try {
            this.index.put(webhook);
        } catch (error) {
            this.index.remove(id);
            this.onRefused(webhook, error instanceof Error ? error.message : String(error));
        }
        this.observer.changed(webhook);
    }

    public async delete(id: string): Promise<boolean> {
        if (this.shared) {
            const deleted = await this.shared.delete(id);
            if (deleted) {
                await this.follow(id, undefined);
            }
            return deleted;
        }
        const deleted = await this.writes.run(() => this.store.delete(id));
        if (deleted) {
            this.index.remove(id);
            this.observer.removed(id);
        }
        return deleted;
    }
}
