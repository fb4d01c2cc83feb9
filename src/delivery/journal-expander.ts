import { Delivery } from "../contracts";
import { PayloadMatcher } from "../events/matcher";
import { DeliveryIds, DeliveryIdScheme, freshDeliveryIds, readsPayload } from "../store/delivery-id";
import { ExpandedEntry, JournalEntry, OwedDelivery } from "../store/journal-entry";
import { JournalReader } from "../store/journal-reader";

export interface ExpanderDependencies {
    journal: Pick<JournalReader, "oldest" | "commit">;
    /** The compiled conditions of an enabled webhook; undefined when it is disabled or gone: it owes nothing. */
    matcherOf: (webhookId: string) => PayloadMatcher | undefined;
    /** A monotonic clock in milliseconds (performance.now). */
    now: () => number;
    /** How deliveries get their ids, as the listener gives them (see store/delivery-id.ts). */
    deliveryIds?: DeliveryIdScheme;
}

export interface ExpansionResult {
    /** true when the journal is empty. */
    drained: boolean;
    /** Webhooks given deliveries by this call. */
    webhookIds: string[];
    /** The deliveries this call wrote, as they are in the outbox: pending, due at their event's time. */
    deliveries: Delivery[];
    /** Journal entries moved by this call. */
    committed: number;
    /** Entries wait this long to be moved together (see GATHER_FACTOR); 0 when none waits. */
    gatherMs: number;
}

// Journal entries read per query.
const BATCH = 500;
// After a commit owed to many webhooks, entries wait to be moved until this many times as long as
// that commit took has passed (at most GATHER_MAX_MS): a commit's cost is mostly the pages it
// writes, and an event owed to many webhooks dirties a page of each webhook's index; several events
// a commit share those pages (in SQL alone, 100 webhooks: 42 µs a delivery one event a commit, 23 µs
// five; the fan-out bench went from 6,195 to 8,911 deliveries/s). Commits owed to few webhooks
// dirty few pages, and their entries never wait: a commit that ran a checkpoint would hold them.
const GATHER_FACTOR = 3;
const GATHER_MIN_WEBHOOKS = 16;
const GATHER_MAX_MS = 50;

/** Where the testing of one entry's deferred webhooks stands, between two slices. */
interface Progress {
    seq: number;
    /** The event's payload, read from its body when a condition or a delivery id first needs it. */
    payload?: { data: unknown };
    /** The ids of the deliveries the entry owes its deferred webhooks, one scheme an entry. */
    idOf?: DeliveryIds;
    /** The deferred webhook under test, and its condition to resume from. */
    next: number;
    condition: number;
    owed: OwedDelivery[];
}

const freshDelivery = (entry: ExpandedEntry, { id, webhookId }: OwedDelivery): Delivery => ({
    id,
    webhookId,
    event: entry.event,
    body: entry.body,
    status: "pending",
    attempts: 0,
    nextAttemptAt: entry.createdAt,
    reason: null,
    createdAt: entry.createdAt,
    updatedAt: entry.createdAt,
});

/** How many webhooks the entries owe deliveries, counted up to GATHER_MIN_WEBHOOKS. */
const webhooksOwed = (entries: readonly ExpandedEntry[]): number => {
    const seen = new Set<string>();
    for (const entry of entries) {
        for (const { webhookId } of entry.deliveries) {
            seen.add(webhookId);
            if (seen.size >= GATHER_MIN_WEBHOOKS) {
                return seen.size;
            }
        }
    }
    return seen.size;
};

const payloadOf = (body: string): unknown => (JSON.parse(body) as { data?: unknown }).data;

/** The entry's payload, parsed once: a webhook without conditions and a fresh id need none of it. */
const payloadFor = (progress: Progress, entry: JournalEntry): unknown =>
    (progress.payload ??= { data: payloadOf(entry.body) }).data;

/**
 * Moves journaled events into delivery rows, oldest first, within a time slice, so that the
 * conditions the listener deferred (its per-event budget ran out) are tested a slice at a time and
 * never hold the event loop for long. An entry is committed whole, with all its deliveries.
 */
export class JournalExpander {
    private progress: Progress | undefined;
    /** Until when entries wait for others, after the last commit (see GATHER_FACTOR). */
    private gatherUntil = 0;

    public constructor(private readonly dependencies: ExpanderDependencies) {}

    public expand(sliceMs: number): ExpansionResult {
        const { journal, now } = this.dependencies;
        const start = now();
        const deadline = start + sliceMs;
        const webhookIds: string[] = [];
        const deliveries: Delivery[] = [];
        let committed = 0;
        for (;;) {
            const entries = journal.oldest(BATCH);
            if (entries.length === 0) {
                return { drained: true, webhookIds, deliveries, committed, gatherMs: 0 };
            }
            if (committed === 0 && start < this.gatherUntil && entries.length < BATCH) {
                return { drained: true, webhookIds, deliveries, committed, gatherMs: this.gatherUntil - start };
            }
            const ready: ExpandedEntry[] = [];
            let finished = true;
            for (const entry of entries) {
                const owed = entry.deferred.length === 0 ? entry.deliveries : this.test(entry, deadline);
                if (!owed) {
                    finished = false;
                    break;
                }
                ready.push({ ...entry, deliveries: owed });
            }
            const commitStart = now();
            const written = new Set(journal.commit(ready));
            const commitEnd = now();
            if (webhooksOwed(ready) >= GATHER_MIN_WEBHOOKS) {
                this.gatherUntil = commitEnd + Math.min(GATHER_MAX_MS, GATHER_FACTOR * (commitEnd - commitStart));
            }
            for (const entry of ready) {
                for (const owed of entry.deliveries) {
                    if (written.has(owed)) {
                        webhookIds.push(owed.webhookId);
                        deliveries.push(freshDelivery(entry, owed));
                    }
                }
            }
            committed += ready.length;
            if (!finished || now() > deadline) {
                return { drained: false, webhookIds, deliveries, committed, gatherMs: 0 };
            }
        }
    }

    /** The entry's deliveries once every deferred webhook is tested; undefined when the slice ran out first. */
    private test(entry: JournalEntry, deadline: number): OwedDelivery[] | undefined {
        const { matcherOf, now } = this.dependencies;
        const progress: Progress =
            this.progress?.seq === entry.seq
                ? this.progress
                : {
                      seq: entry.seq,
                      next: 0,
                      condition: 0,
                      owed: [...entry.deliveries],
                  };
        while (progress.next < entry.deferred.length) {
            const webhookId = entry.deferred[progress.next];
            const matcher = matcherOf(webhookId);
            const payload = matcher && !matcher.unconditional ? payloadFor(progress, entry) : undefined;
            const verdict = matcher?.testWithin(payload, progress.condition, deadline, now);
            if (verdict && !verdict.done) {
                progress.condition = verdict.next;
                this.progress = progress;
                return undefined;
            }
            if (verdict?.matches) {
                // Its id is born here: nothing was sent under it before this entry is committed.
                const scheme = this.dependencies.deliveryIds ?? freshDeliveryIds;
                progress.idOf ??= scheme(entry.event, readsPayload(scheme) ? payloadFor(progress, entry) : undefined);
                progress.owed.push({ id: progress.idOf(webhookId), webhookId });
            }
            progress.next++;
            progress.condition = 0;
            if (progress.next < entry.deferred.length && now() > deadline) {
                this.progress = progress;
                return undefined;
            }
        }
        this.progress = undefined;
        return progress.owed;
    }
}
