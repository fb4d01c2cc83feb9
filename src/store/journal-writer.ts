import {
    closeSync,
    fstatSync,
    ftruncateSync,
    mkdirSync,
    openSync,
    readSync,
    unlinkSync,
    writeFileSync,
    writeSync,
} from "fs";

import { JournaledEvent } from "./journal-entry";
import {
    decodeRecord,
    encodeRecord,
    groupPath,
    HEADER_BYTES,
    listSegments,
    MAX_PAYLOAD_BYTES,
    openJournalFile,
    positionOf,
    segmentPath,
} from "./journal-segments";

/** Where the delivery engine stands in the journal: the next record it has not turned into deliveries. */
export interface JournalCursor {
    segment: number;
    offset: number;
}

export interface JournalWriterOptions {
    folder: string;
    /** A segment past this size is closed and the next record starts a new one. */
    segmentBytes: number;
    /** Reads the engine's cursor (committed in the SQLite file with the deliveries it made). */
    readCursor: () => JournalCursor;
}

const OWNER_ONLY_FOLDER = 0o700;
const OWNER_ONLY_FILE = 0o600;
// Below this many positions kept, backlog() alone trims them; past it, appends do too.
const TRIM_FLOOR = 10_000;

/**
 * The node's thread's side of the journal: appends each event as one record, with one write() to
 * a file no other thread writes, so an append never waits for a lock the delivery engine holds.
 * A write that returned is in the operating system's page cache: it survives the process being
 * killed, as a SQLite commit with `synchronous = NORMAL` does.
 */
export class JournalWriter {
    private fd: number | undefined;
    private segment = 0;
    private offset = 0;
    /** Positions of records not yet known to be turned into deliveries, oldest first from `head`. */
    private positions: number[] = [];
    private head = 0;
    private trimAt = TRIM_FLOOR;
    /** A number for each deferred group met, the same for as long as the group is in use. */
    private readonly groupNumbers = new WeakMap<readonly string[], { number: number; text: string }>();
    private lastGroup = 0;
    /** The groups whose file the current segment has, and which segment that is. */
    private declared = { segment: -1, groups: new Set<number>() };
    /** Groups of the current segment written ahead that no record refers to yet. */
    private unreferenced = new Set<number>();

    public constructor(private readonly options: JournalWriterOptions) {
        mkdirSync(options.folder, { recursive: true, mode: OWNER_ONLY_FOLDER });
        const cursor = options.readCursor();
        const segments = listSegments(options.folder);
        segments.filter((segment) => segment >= cursor.segment).forEach((segment) => this.count(segment, cursor));
        // Every start writes a segment of its own: a record torn by a crash stays at the end of the last one.
        this.segment = Math.max(cursor.segment, ...segments) + 1;
        try {
            // Created now, not at the first event: the listener's first append is as quick as the rest.
            this.fdFor(0);
        } catch {
            // The first append tries again, and its events wait in the spool while it cannot.
        }
    }

    /** Appends the event; throws (nothing written) when the file refuses it. */
    public append(event: JournaledEvent): void {
        const { deferredGroup } = event;
        const group = deferredGroup ? this.groupNumberOf(deferredGroup) : undefined;
        const record = encodeRecord(event, group);
        const fd = this.fdFor(record.length);
        if (deferredGroup && group !== undefined) {
            this.declare(deferredGroup, group);
            this.unreferenced.delete(group);
        }
        const start = this.offset;
        try {
            let written = 0;
            while (written < record.length) {
                written += writeSync(fd, record, written, record.length - written, start + written);
            }
        } catch (error) {
            this.undo(fd, start);
            throw error;
        }
        this.offset = start + record.length;
        this.positions.push(positionOf(this.segment, start));
        if (this.positions.length - this.head > this.trimAt) {
            this.trim();
            this.trimAt = Math.max(TRIM_FLOOR, 2 * (this.positions.length - this.head));
        }
    }

    /** Encodes the event as `append` would and writes nothing: see KernelEventListener.warmUp. */
    public rehearse(event: JournaledEvent): void {
        encodeRecord(event, event.deferredGroup ? this.groupNumberOf(event.deferredGroup) : undefined);
    }

    /** Journaled events not yet turned into deliveries. */
    public backlog(): number {
        this.trim();
        return this.positions.length - this.head;
    }

    public close(): void {
        if (this.fd === undefined) {
            return;
        }
        closeSync(this.fd);
        this.fd = undefined;
        if (this.offset === 0) {
            unlinkSync(segmentPath(this.options.folder, this.segment));
        }
    }

    /**
     * Writes a new deferred group's file beside the current segment now, off any event's path: the
     * first event that refers to it then writes only its record. Where this fails, that event
     * writes the file itself, as it does in each later segment. The group it replaces loses its
     * file if no record referred to it: a register changed a thousand times leaves one file.
     */
    public prepareGroup(group: readonly string[] | undefined, replaced?: readonly string[]): void {
        try {
            if (group) {
                const number = this.groupNumberOf(group);
                if (!this.isDeclared(number)) {
                    this.declare(group, number);
                    this.unreferenced.add(number);
                }
            }
            const old = replaced && this.groupNumbers.get(replaced)?.number;
            if (old !== undefined && this.unreferenced.has(old) && this.isDeclared(old)) {
                unlinkSync(groupPath(this.options.folder, this.segment, old));
                this.unreferenced.delete(old);
                this.declared.groups.delete(old);
            }
        } catch {
            // The first record that refers to the group tries again, and says why if it cannot.
        }
    }

    private isDeclared(number: number): boolean {
        return this.declared.segment === this.segment && this.declared.groups.has(number);
    }

    private groupNumberOf(group: readonly string[]): number {
        return this.groupOf(group).number;
    }

    private groupOf(group: readonly string[]): { number: number; text: string } {
        let known = this.groupNumbers.get(group);
        if (known === undefined) {
            known = { number: ++this.lastGroup, text: JSON.stringify(group) };
            this.groupNumbers.set(group, known);
        }
        return known;
    }

    /** Writes the group's file beside the current segment, once, before any record of it refers to it. */
    private declare(group: readonly string[], number: number): void {
        if (this.declared.segment !== this.segment) {
            this.declared = { segment: this.segment, groups: new Set() };
            this.unreferenced = new Set();
        }
        if (this.declared.groups.has(number)) {
            return;
        }
        writeFileSync(groupPath(this.options.folder, this.segment, number), this.groupOf(group).text, {
            mode: OWNER_ONLY_FILE,
        });
        this.declared.groups.add(number);
    }

    private fdFor(recordBytes: number): number {
        const full = this.offset > 0 && this.offset + recordBytes > this.options.segmentBytes;
        // A segment deleted under the writer (its folder removed by hand) takes every write without
        // an error, into a file nobody can read any more: the next record goes to a new one.
        if (this.fd !== undefined && (full || fstatSync(this.fd).nlink === 0)) {
            closeSync(this.fd);
            this.fd = undefined;
            this.segment++;
        }
        if (this.fd === undefined) {
            // The folder is made again should it have gone: events wait in the spool until it can be.
            mkdirSync(this.options.folder, { recursive: true, mode: OWNER_ONLY_FOLDER });
            this.fd = openSync(segmentPath(this.options.folder, this.segment), "wx", OWNER_ONLY_FILE);
            this.offset = 0;
        }
        return this.fd;
    }

    /** Takes back a record written in part; where even that fails, later records go to a new segment. */
    private undo(fd: number, start: number): void {
        try {
            ftruncateSync(fd, start);
        } catch {
            closeSync(fd);
            this.fd = undefined;
            this.segment++;
        }
    }

    private trim(): void {
        const cursor = this.options.readCursor();
        const expanded = positionOf(cursor.segment, cursor.offset);
        while (this.head < this.positions.length && this.positions[this.head] < expanded) {
            this.head++;
        }
        if (this.head > this.positions.length / 2) {
            this.positions = this.positions.slice(this.head);
            this.head = 0;
        }
    }

    /** Notes the records of an earlier run's segment that the engine has not reached yet. */
    private count(segment: number, cursor: JournalCursor): void {
        const path = segmentPath(this.options.folder, segment);
        const fd = openJournalFile(path);
        const size = fstatSync(fd).size;
        try {
            const header = Buffer.alloc(HEADER_BYTES);
            let offset = segment === cursor.segment ? cursor.offset : 0;
            while (offset + HEADER_BYTES <= size) {
                readSync(fd, header, 0, HEADER_BYTES, offset);
                const payloadBytes = header.readUInt32LE(0);
                if (payloadBytes > MAX_PAYLOAD_BYTES || offset + HEADER_BYTES + payloadBytes > size) {
                    return;
                }
                const record = Buffer.allocUnsafe(HEADER_BYTES + payloadBytes);
                readSync(fd, record, 0, record.length, offset);
                if (decodeRecord(record, 0, record.length).kind !== "record") {
                    return;
                }
                this.positions.push(positionOf(segment, offset));
                offset += record.length;
            }
        } finally {
            closeSync(fd);
        }
    }
}
