import { Webhook, WebhookInput } from "../contracts";
import { WebhookIndex } from "../events/webhook-index";
import { WebhookStore } from "../store/webhook-store";
import { WriteBatcher } from "../store/write-batcher";
import { SharedRegisterStore } from "./shared-register";
import { RegisterObserver, WebhookRegister } from "./webhook-register";

// Webhooks of the shared register applied to this relay's copy per turn of the event loop.
const FOLLOW_SLICE = 100;
// Ids read or gathered per turn while comparing the copy with the shared register.
const ID_SLICE = 5_000;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const sameWebhook = (left: Webhook, right: Webhook): boolean =>
    left.event === right.event &&
    left.target === right.target &&
    left.enabled === right.enabled &&
    left.match === right.match &&
    left.token === right.token &&
    left.updatedAt === right.updatedAt &&
    JSON.stringify(left.conditions) === JSON.stringify(right.conditions);

/**
 * The register with several relays on one PostgreSQL (storage.driver "postgres"). A write goes to
 * the shared register first and is answered once committed there; this relay's SQLite copy follows
 * at once, and the other relays' copies when they are told (`follow`). Reads are answered from
 * this relay's copy.
 */
export class SharedWebhookRegister extends WebhookRegister {
    /**
     * Copies of one webhook's shared state are applied one at a time, in the order they came;
     * those of different webhooks at once (their local writes share a transaction).
     */
    private readonly following = new Map<string, Promise<void>>();

    public constructor(
        store: WebhookStore,
        writes: WriteBatcher,
        index: WebhookIndex,
        observer: RegisterObserver,
        private readonly shared: SharedRegisterStore,
        private readonly onRefused: (webhook: Webhook, reason: string) => void = () => undefined,
    ) {
        super(store, writes, index, observer);
    }

    public override async create(input: WebhookInput): Promise<Webhook> {
        const webhook = this.newWebhook(input);
        await this.shared.insert(webhook);
        await this.follow(webhook.id, webhook);
        return webhook;
    }

    public override async restore(
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
        const added = await this.shared.insertMissing(fitting);
        for (const webhook of added) {
            await this.follow(webhook.id, webhook);
        }
        await this.writes.run(alsoInTransaction);
        return { added, refused };
    }

    public override async update(id: string, changes: Partial<WebhookInput>): Promise<Webhook | undefined> {
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

    public override async delete(id: string): Promise<boolean> {
        const deleted = await this.shared.delete(id);
        if (deleted) {
            await this.follow(id, undefined);
        }
        return deleted;
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
}
