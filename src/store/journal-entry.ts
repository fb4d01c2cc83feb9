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
