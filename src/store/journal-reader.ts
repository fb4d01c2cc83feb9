import { closeSync, existsSync, fstatSync, readFileSync, readSync, unlinkSync } from "fs";
import { performance } from "perf_hooks";

import { SqliteDatabase } from "./database";
import { deliveryWriter, EventJournal, ExpandedEntry, JournalEntry, OwedDelivery } from "./event-journal";
import {
    decodeRecord,
    DecodedRecord,
    groupPath,
    listGroups,
    listSegments,
    openJournalFile,
    parseGroup,
    positionOf,
    segmentPath,
} from "./journal-segments";
import { JournalCursor } from "./journal-writer";

interface FileEntry extends JournalEntry {
    /** Where the next record starts. */
    end: JournalCursor;
}

const READ_BYTES = 1024 * 1024;
const LISTING_INTERVAL_MS = 1_000;
// Record positions start at 2^32 (segment 1): a smaller seq is a row of the table journal of old.
const FIRST_FILE_POSITION = positionOf(1, 0);

export interface JournalReaderOptions {
    folder: string;
    /** Told of bytes skipped at the end of a segment (a record torn by a crash). */
    onSkipped: (segment: number, bytes: number) => void;
    /**
     * Told of a deferred group whose file is gone or damaged (only something outside the plugin does
     * that): the records referring to it owe nothing to its webhooks.
     */
    onGroupLost: (segment: number, group: number, reason: string) => void;
}

/** Reads the engine's cursor, committed in the SQLite file with the deliveries it made. */
export const journalCursorOf = (db: SqliteDatabase): (() => JournalCursor) => {
    const statement = db.prepare<[], JournalCursor>("SELECT segment, offset FROM journal_cursor WHERE id = 1");
    return () => statement.get() ?? { segment: 0, offset: 0 };
};

/**
 * The delivery engine's side of the journal: reads the records the node's thread appended, in
 * order, and commits the deliveries they owe together with its cursor, in one transaction, so each
 * record is turned into deliveries exactly once; then deletes the segments it has passed. Rows of
 * the table journal an earlier version wrote are read first.
 */
export class JournalReader {
    private readonly statements;
    private readonly commitAll: (entries: readonly ExpandedEntry[], cursor: JournalCursor) => OwedDelivery[];
    private cursor: JournalCursor;
    /** Where reading goes on: records before it and after the cursor are in `ahead`. */
    private reading: JournalCursor;
    private fd: number | undefined;
    private ahead: FileEntry[] = [];
    private buffer = Buffer.allocUnsafe(READ_BYTES);
    private tableDrained = false;
    /** When the folder may next be listed for a segment after a gap (see laterSegment). */
    private nextListingAt = 0;
    /** Deferred groups read, by segment and number. */
    private readonly groups = new Map<string, readonly string[]>();

    public constructor(
        db: SqliteDatabase,
        private readonly table: EventJournal,
        private readonly options: JournalReaderOptions,
    ) {
        const writeDeliveries = deliveryWriter(db);
        this.statements = {
            cursor: db.prepare<[number, number]>("UPDATE journal_cursor SET segment = ?, offset = ? WHERE id = 1"),
        };
        this.commitAll = db.transaction((entries: readonly ExpandedEntry[], cursor: JournalCursor) => {
            const inserted = writeDeliveries(entries);
            this.statements.cursor.run(cursor.segment, cursor.offset);
            return inserted;
        });
        this.cursor = journalCursorOf(db)();
        this.reading = { ...this.cursor };
    }

    /** The oldest entries not yet committed, in order; the same ones until they are. */
    public oldest(limit: number): JournalEntry[] {
        if (!this.tableDrained) {
            const rows = this.table.oldest(limit);
            if (rows.length > 0) {
                return rows;
            }
            this.tableDrained = true;
        }
        while (this.ahead.length < limit && this.readMore()) {
            // Reads until enough records are ahead or the journal's end is reached.
        }
        return this.ahead.slice(0, limit);
    }

    /**
     * Writes the entries' deliveries and moves the cursor past them, in one transaction; entries are
     * the oldest, in order. Returns the deliveries written (none for a webhook deleted meanwhile).
     */
    public commit(entries: readonly ExpandedEntry[]): OwedDelivery[] {
        if (entries.length === 0) {
            return [];
        }
        if (entries[0].seq < FIRST_FILE_POSITION) {
            return this.table.commit(entries);
        }
        const last = this.ahead[entries.length - 1];
        if (!last || last.seq !== entries[entries.length - 1].seq) {
            throw new Error("journal entries committed out of order");
        }
        const inserted = this.commitAll(entries, last.end);
        this.ahead = this.ahead.slice(entries.length);
        const passed = this.cursor.segment;
        this.cursor = last.end;
        if (this.cursor.segment !== passed) {
            this.deletePassedSegments();
        }
        return inserted;
    }

    public close(): void {
        if (this.fd !== undefined) {
            closeSync(this.fd);
            this.fd = undefined;
        }
    }

    /** Reads records past `reading`; false when there is nothing more for now. */
    private readMore(): boolean {
        const fd = this.openReading();
        if (fd === undefined) {
            return false;
        }
        let length = readSync(fd, this.buffer, 0, this.buffer.length, this.reading.offset);
        let start = 0;
        for (;;) {
            const decoded = decodeRecord(this.buffer, start, length);
            if (decoded.kind === "record") {
                const { bytes } = decoded.record;
                const offset = this.reading.offset + start;
                let entry: Omit<JournalEntry, "seq">;
                try {
                    entry = this.entryOf(decoded.record);
                } catch (error) {
                    // The records before it stay read; this one is read again on the next try.
                    this.reading = { segment: this.reading.segment, offset };
                    throw error;
                }
                start += bytes;
                this.ahead.push({
                    ...entry,
                    seq: positionOf(this.reading.segment, offset),
                    end: { segment: this.reading.segment, offset: offset + bytes },
                });
                continue;
            }
            if (start > 0) {
                this.reading = { segment: this.reading.segment, offset: this.reading.offset + start };
                return true;
            }
            if (decoded.kind === "incomplete" && decoded.needs > this.buffer.length) {
                this.buffer = Buffer.allocUnsafe(decoded.needs);
                length = readSync(fd, this.buffer, 0, this.buffer.length, this.reading.offset);
                continue;
            }
            return this.nextSegment(fd, length);
        }
    }

    private entryOf({ event, createdAt, deliveries, deferred, body, group }: DecodedRecord): Omit<JournalEntry, "seq"> {
        if (group === undefined) {
            return { event, createdAt, deliveries, deferred, body };
        }
        const ids = this.groupOf(this.reading.segment, group);
        return { event, createdAt, deliveries, deferred: deferred.length === 0 ? ids : [...deferred, ...ids], body };
    }

    /**
     * The group's ids, read once. A file gone or not a list of ids is lost for good (said once); any
     * other failure to read it (a full table of open files, an I/O error) throws, and the journal
     * waits for it rather than lose what its records owe.
     */
    private groupOf(segment: number, group: number): readonly string[] {
        const key = `${segment}:${group}`;
        let ids = this.groups.get(key);
        if (!ids) {
            let text: string | undefined;
            try {
                text = readFileSync(groupPath(this.options.folder, segment, group), "utf8");
            } catch (error) {
                if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
                    throw error;
                }
            }
            ids = text === undefined ? undefined : parseGroup(text);
            if (!ids) {
                const reason = text === undefined ? "its file is gone" : "its file is not a list of webhook ids";
                this.options.onGroupLost(segment, group, reason);
                ids = [];
            }
            this.groups.set(key, ids);
        }
        return ids;
    }

    /**
     * At the end of what a segment holds: once a later segment exists, the writer is done with
     * this one, and what is left in it (a record torn by a crash) is skipped.
     */
    private nextSegment(fd: number, leftBytes: number): boolean {
        const later = this.laterSegment();
        if (later === undefined) {
            return false;
        }
        // Written before the later segment was created, perhaps after the read above.
        if (readSync(fd, this.buffer, 0, this.buffer.length, this.reading.offset) > leftBytes) {
            return true;
        }
        const skipped = fstatSync(fd).size - this.reading.offset;
        if (skipped > 0) {
            this.options.onSkipped(this.reading.segment, skipped);
        }
        closeSync(fd);
        this.fd = undefined;
        this.reading = { segment: later, offset: 0 };
        return true;
    }

    /**
     * The segment after the one being read, if the writer has started it. The writer numbers its
     * segments one after another (a new run's after the highest there is), so the next one is
     * looked for by name; listing the folder, at most once a second, only guards against a gap
     * nothing should leave. Listing it each time cost every pass of the engine at the journal's
     * end a readdir and its garbage.
     */
    private laterSegment(): number | undefined {
        const next = this.reading.segment + 1;
        if (existsSync(segmentPath(this.options.folder, next))) {
            return next;
        }
        const now = performance.now();
        if (now < this.nextListingAt) {
            return undefined;
        }
        this.nextListingAt = now + LISTING_INTERVAL_MS;
        return listSegments(this.options.folder).find((segment) => segment > this.reading.segment);
    }

    private openReading(): number | undefined {
        if (this.fd !== undefined) {
            return this.fd;
        }
        const path = segmentPath(this.options.folder, this.reading.segment);
        if (!existsSync(path)) {
            const later = listSegments(this.options.folder).find((segment) => segment > this.reading.segment);
            if (later === undefined) {
                return undefined;
            }
            this.reading = { segment: later, offset: 0 };
        }
        this.fd = openJournalFile(segmentPath(this.options.folder, this.reading.segment));
        return this.fd;
    }

    private deletePassedSegments(): void {
        for (const { segment, group } of listGroups(this.options.folder)) {
            if (segment < this.cursor.segment) {
                unlinkSync(groupPath(this.options.folder, segment, group));
                this.groups.delete(`${segment}:${group}`);
            }
        }
        for (const segment of listSegments(this.options.folder)) {
            if (segment >= this.cursor.segment) {
                return;
            }
            unlinkSync(segmentPath(this.options.folder, segment));
        }
    }
}
