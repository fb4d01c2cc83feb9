import { closeSync, existsSync, fstatSync, readFileSync, readSync, unlinkSync } from "fs";
import { performance } from "perf_hooks";

import { SqliteDatabase } from "./database";
import { deliveryWriter, ExpandedEntry, JournalEntry, OwedDelivery } from "./journal-entry";
import {
    decodeRecord,
    DecodedRecord,
    groupPath,
    HEADER_BYTES,
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

export interface JournalReaderOptions {
    folder: string;
    /** Told of bytes skipped at the end of a segment (a record torn by a crash). */
    onSkipped: (segment: number, bytes: number) => void;
    /**
     * Told of bytes skipped inside a segment: a record whose length or checksum is wrong (damaged on
     * disk, or by hand), passed over to the next record that reads whole.
     */
    onDamaged: (segment: number, offset: number, bytes: number) => void;
    /** Told of a segment gone or cut short before the reader had read all of it. */
    onSegmentLost: (segment: number, reason: string) => void;
    /**
     * Told of a deferred group whose file is gone or damaged (only something outside the plugin does
     * that): the records referring to it owe nothing to its webhooks.
     */
    onGroupLost: (segment: number, group: number, reason: string) => void;
    /** Told of a group's file that exists but can never be read as it is (a folder in its place, no permission). */
    onGroupUnreadable: (error: Error) => void;
    /** Told once the reader has passed every segment whose group it could not read. */
    onUnreadableGroupsPassed: () => void;
}

// Errors that no retry mends: the file must be changed by someone. Others (too many open files,
// an I/O error) may pass, and the journal waits for them rather than lose what its records owe.
const LASTING_READ_ERRORS = new Set(["EISDIR", "EACCES", "EPERM", "ENOTDIR", "ELOOP", "ENAMETOOLONG"]);

/** Reads the engine's cursor, committed in the SQLite file with the deliveries it made. */
export const journalCursorOf = (db: SqliteDatabase): (() => JournalCursor) => {
    const statement = db.prepare<[], JournalCursor>("SELECT segment, offset FROM journal_cursor WHERE id = 1");
    return () => statement.get() ?? { segment: 0, offset: 0 };
};

/**
 * The delivery engine's side of the journal: reads the records the node's thread appended, in
 * order, and commits the deliveries they owe together with its cursor, in one transaction, so each
 * record is turned into deliveries exactly once; then deletes the segments it has passed.
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
    /** When the folder may next be listed for a segment after a gap (see laterSegment). */
    private nextListingAt = 0;
    /** Deferred groups read, by segment and number. */
    private readonly groups = new Map<string, readonly string[]>();
    /** Segments with a group that could not be read for good: storage is degraded until they are passed. */
    private readonly unreadableSegments = new Set<number>();

    public constructor(
        db: SqliteDatabase,
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
            if (decoded.kind === "invalid") {
                return this.resynchronise(fd, this.laterSegment() !== undefined);
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
     * The group's ids, read once. A file gone, not a list of ids, or unreadable for good (a folder in
     * its place, no permission) is lost (said once; the last is also storage degraded until the
     * reader passes its segment): the records' other deliveries go on. Any other failure to read it
     * (a full table of open files, an I/O error) throws, and the journal waits for it.
     */
    private groupOf(segment: number, group: number): readonly string[] {
        const key = `${segment}:${group}`;
        let ids = this.groups.get(key);
        if (!ids) {
            const path = groupPath(this.options.folder, segment, group);
            let text: string | undefined;
            let unreadable: Error | undefined;
            try {
                text = readFileSync(path, "utf8");
            } catch (error) {
                const code = (error as NodeJS.ErrnoException).code ?? "";
                if (code !== "ENOENT" && !LASTING_READ_ERRORS.has(code)) {
                    throw error;
                }
                if (code !== "ENOENT") {
                    unreadable = Object.assign(new Error(`${path}: ${(error as Error).message}`), { code });
                }
            }
            ids = text === undefined ? undefined : parseGroup(text);
            if (!ids) {
                const reason = unreadable
                    ? `its file cannot be read: ${unreadable.message}`
                    : text === undefined
                      ? "its file is gone"
                      : "its file is not a list of webhook ids";
                this.options.onGroupLost(segment, group, reason);
                if (unreadable) {
                    this.unreadableSegments.add(segment);
                    this.options.onGroupUnreadable(unreadable);
                }
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
        const size = fstatSync(fd).size;
        if (size < this.reading.offset) {
            this.options.onSegmentLost(
                this.reading.segment,
                `it holds ${size} bytes, and ${this.reading.offset} had been read: it was cut short, and the events in what is gone are lost`,
            );
        }
        const skipped = size - this.reading.offset;
        // A record whose length is damaged reads as one not yet written whole: a record that reads
        // whole after it tells damage from a record torn at the end by a crash.
        if (skipped > 0 && this.resynchronise(fd, true, false)) {
            return true;
        }
        if (skipped > 0) {
            this.options.onSkipped(this.reading.segment, skipped);
        }
        closeSync(fd);
        this.fd = undefined;
        this.reading = { segment: later, offset: 0 };
        return true;
    }

    /**
     * Passes over damaged bytes at the reading position to the next record that reads whole (its
     * length, checksum and head all right: a false match is a 1 in 2^32 chance and more). Without
     * one, what is left of a finished segment is damage too (unless `toTheEnd` is false: the caller
     * then tells a torn end), and in the segment being written the reader waits at its end for the
     * next record. true when the reading position moved.
     */
    private resynchronise(fd: number, finished: boolean, toTheEnd = true): boolean {
        const { segment, offset } = this.reading;
        const rest = Buffer.allocUnsafe(Math.max(0, fstatSync(fd).size - offset));
        const length = readSync(fd, rest, 0, rest.length, offset);
        for (let at = 1; at + HEADER_BYTES <= length; at++) {
            if (decodeRecord(rest, at, length).kind === "record") {
                this.options.onDamaged(segment, offset, at);
                this.reading = { segment, offset: offset + at };
                return true;
            }
        }
        if (!toTheEnd || length === 0) {
            return false;
        }
        this.options.onDamaged(segment, offset, length);
        this.reading = { segment, offset: offset + length };
        return finished ? this.nextSegment(fd, 0) : true;
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
            if (this.reading.offset > 0) {
                this.options.onSegmentLost(
                    this.reading.segment,
                    `it is gone, and ${this.reading.offset} bytes of it had been read: the events after them are lost`,
                );
            }
            this.reading = { segment: later, offset: 0 };
        }
        this.fd = openJournalFile(segmentPath(this.options.folder, this.reading.segment));
        return this.fd;
    }

    private deletePassedSegments(): void {
        for (const { segment, group } of listGroups(this.options.folder)) {
            if (segment < this.cursor.segment) {
                // A folder in a group's place is the operator's to remove: rmSync would take its contents too.
                try {
                    unlinkSync(groupPath(this.options.folder, segment, group));
                } catch {
                    // left where it is; its segment is passed all the same
                }
                this.groups.delete(`${segment}:${group}`);
            }
        }
        if (
            this.unreadableSegments.size > 0 &&
            [...this.unreadableSegments].every((segment) => segment < this.cursor.segment)
        ) {
            this.unreadableSegments.clear();
            this.options.onUnreadableGroupsPassed();
        }
        for (const segment of listSegments(this.options.folder)) {
            if (segment >= this.cursor.segment) {
                return;
            }
            unlinkSync(segmentPath(this.options.folder, segment));
        }
    }
}
