import { SqliteDatabase } from "./database";
import { errorCodeOf } from "./storage-health";

export interface OwedDelivery {
    id: string;
    webhookId: string;
}

/** An event and the deliveries it owes, as the listener writes it: one row, whatever the fan-out. */
export interface JournaledEvent {
    event: string;
    /** The exact body every delivery of the event posts. */
    body: string;
    createdAt: number;
    /** Webhooks whose conditions held. */
    deliveries: readonly OwedDelivery[];
    /** Ids of webhooks the listener had no time to test within its budget: tested off its path, given delivery ids then. */
    deferred: readonly string[];
    /**
     * More webhooks tested off the listener's path (those without a condition, then those with a
     * regexp condition: see WebhookIndex), as one array shared by every event until the register
     * changes: the journal's files hold it once a segment. Their deliveries get their ids there.
     */
    deferredGroup?: readonly string[];
}

export interface JournalEntry extends JournaledEvent {
    seq: number;
}

/** A journal entry's outcome: the deliveries it owes after its deferred conditions were tested. */
export interface ExpandedEntry {
    seq: number;
    event: string;
    body: string;
    createdAt: number;
    deliveries: readonly OwedDelivery[];
}

interface JournalRow {
    seq: number;
    event: string;
    body: string;
    created_at: number;
    deliveries: string;
    deferred: string;
}

type Pair = [string, string];

const toPairs = (owed: readonly OwedDelivery[]): string =>
    JSON.stringify(owed.map(({ id, webhookId }) => [id, webhookId]));

const fromPairs = (text: string): OwedDelivery[] =>
    (JSON.parse(text) as Pair[]).map(([id, webhookId]) => ({ id, webhookId }));

const rowToEntry = (row: JournalRow): JournalEntry => ({
    seq: row.seq,
    event: row.event,
    body: row.body,
    createdAt: row.created_at,
    deliveries: fromPairs(row.deliveries),
    deferred: JSON.parse(row.deferred) as string[],
});

/**
 * Writes journal entries' delivery rows, pending and due at their event's time, within the caller's
 * transaction; returns the deliveries written. A webhook deleted since its event was journaled owes
 * nothing. An event owed to several webhooks writes its body once, in delivery_bodies, which its
 * deliveries refer to; an event owed once keeps its body in its delivery's row.
 */
export const deliveryWriter = (db: SqliteDatabase): ((entries: readonly ExpandedEntry[]) => OwedDelivery[]) => {
    const insert = db.prepare<[string, string, string, string, number | null, number, number, number]>(
        // OR IGNORE: an id already there is that very delivery (with the shared register, a chain
        // event seen twice, as a block applied again after a revert, owes the same delivery again).
        // A plain VALUES insert: the webhook's existence is the foreign key's to check. The same row
        // as INSERT … SELECT … WHERE EXISTS (SELECT 1 FROM webhooks …) cost 18 µs instead of 7-8.
        `INSERT OR IGNORE INTO deliveries (id, webhook_id, event, body, body_seq, status, attempts, next_attempt_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
    );
    // Whether the row was written; false for a webhook deleted since the event: the foreign key
    // refused its row, and only that statement was undone (OR IGNORE covers the id alone, never a
    // foreign key).
    const insertOwed = (
        owed: OwedDelivery,
        event: string,
        rowBody: string,
        bodySeq: number | null,
        at: number,
    ): boolean => {
        try {
            return insert.run(owed.id, owed.webhookId, event, rowBody, bodySeq, at, at, at).changes > 0;
        } catch (error) {
            if (errorCodeOf(error) === "SQLITE_CONSTRAINT_FOREIGNKEY") {
                return false;
            }
            throw error;
        }
    };
    const insertBody = db.prepare<[string]>("INSERT INTO delivery_bodies (body, refs) VALUES (?, 0)");
    const countReferences = db.prepare<[number, number]>("UPDATE delivery_bodies SET refs = ? WHERE seq = ?");
    const dropBody = db.prepare<[number]>("DELETE FROM delivery_bodies WHERE seq = ?");
    return (entries) => {
        const written: OwedDelivery[] = [];
        for (const { event, body, createdAt: at, deliveries } of entries) {
            const bodySeq = deliveries.length < 2 ? null : Number(insertBody.run(body).lastInsertRowid);
            const rowBody = bodySeq === null ? body : "";
            let references = 0;
            for (const owed of deliveries) {
                if (insertOwed(owed, event, rowBody, bodySeq, at)) {
                    written.push(owed);
                    references++;
                }
            }
            if (bodySeq !== null) {
                if (references > 0) {
                    countReferences.run(references, bodySeq);
                } else {
                    dropBody.run(bodySeq);
                }
            }
        }
        return written;
    };
};

/**
 * The journal table of earlier versions: one row per event, in the SQLite file. The listener now
 * appends to the journal's files (journal-writer.ts); rows an earlier version left are read first,
 * by the engine's JournalReader, and this table stays empty. `append` remains for the tests that
 * stand for such a version.
 */
export class EventJournal {
    private readonly statements;
    private readonly commitAll: (entries: readonly ExpandedEntry[]) => OwedDelivery[];

    public constructor(db: SqliteDatabase) {
        const writeDeliveries = deliveryWriter(db);
        this.statements = {
            append: db.prepare<[string, string, number, string, string]>(
                "INSERT INTO event_journal (event, body, created_at, deliveries, deferred) VALUES (?, ?, ?, ?, ?)",
            ),
            batch: db.prepare<[number], JournalRow>(
                "SELECT seq, event, body, created_at, deliveries, deferred FROM event_journal ORDER BY seq LIMIT ?",
            ),
            backlog: db.prepare<[], { total: number }>("SELECT COUNT(*) AS total FROM event_journal"),
            forget: db.prepare<[number]>("DELETE FROM event_journal WHERE seq <= ?"),
        };
        this.commitAll = db.transaction((entries: readonly ExpandedEntry[]) => {
            const inserted = writeDeliveries(entries);
            if (entries.length > 0) {
                this.statements.forget.run(entries[entries.length - 1].seq);
            }
            return inserted;
        });
    }

    /** One row and one implicit transaction: durable against a process crash once this returns. */
    public append({ event, body, createdAt, deliveries, deferred, deferredGroup = [] }: JournaledEvent): void {
        this.statements.append.run(
            event,
            body,
            createdAt,
            toPairs(deliveries),
            JSON.stringify([...deferred, ...deferredGroup]),
        );
    }

    /** The oldest entries, in order. */
    public oldest(limit: number): JournalEntry[] {
        return this.statements.batch.all(limit).map(rowToEntry);
    }

    /**
     * Writes the entries' deliveries and forgets the entries, in one transaction; entries are in
     * order. Returns the deliveries written (none for a webhook deleted meanwhile).
     */
    public commit(entries: readonly ExpandedEntry[]): OwedDelivery[] {
        return this.commitAll(entries);
    }

    public backlog(): number {
        return this.statements.backlog.get()?.total ?? 0;
    }
}
