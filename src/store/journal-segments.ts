import { existsSync, openSync, readdirSync, statSync } from "fs";
import { join } from "path";
import { crc32 } from "zlib";

import { JournaledEvent, OwedDelivery } from "./journal-entry";

/**
 * The journal's files: a folder beside the SQLite file holding numbered segments, each a run of
 * records appended by the node's thread and read by the delivery engine.
 *
 * A record: payload length (u32 LE), CRC-32 of the payload (u32 LE), then the payload: the length
 * of its head (u32 LE), the head as JSON `[event, createdAt, [[deliveryId, webhookId], …],
 * [deferredWebhookId, …]]`, and the body's UTF-8 bytes as the receivers get them. A head may end
 * with one more number, a deferred group: a list of webhook ids written once in a file of its own
 * beside the segment (`<segment>.group-<number>.json`, written before any record refers to it), so
 * that the same thousand ids are not written into every record.
 */
export const journalFolderOf = (file: string): string => `${file}.events`;

const SEGMENT_NAME = /^(\d{12})\.log$/;
const GROUP_NAME = /^(\d{12})\.group-(\d+)\.json$/;

const segmentName = (segment: number): string => String(segment).padStart(12, "0");

/**
 * Why a start must not create an empty register here, if it must not: the journal's folder is made
 * with the register, so a folder without its file says the file was deleted or moved.
 */
export const registerLostReason = (file: string): string | undefined => {
    const folder = journalFolderOf(file);
    if (existsSync(file) || !existsSync(folder)) {
        return undefined;
    }
    return `it is gone, but its journal (${folder}) is there, so a register existed: it was deleted or moved. Restore it (with its -wal file, if any), or, to start with an empty register, move the journal's folder away too`;
};

export const segmentPath = (folder: string, segment: number): string => join(folder, `${segmentName(segment)}.log`);

/** Opens a journal file for reading; what is not a regular file fails naming itself, not with a bare EISDIR. */
export const openJournalFile = (path: string): number => {
    const stats = statSync(path);
    if (!stats.isFile()) {
        throw new Error(`${path} is in the journal's folder but is not a file: move it away, then start again`);
    }
    return openSync(path, "r");
};

export const groupPath = (folder: string, segment: number, group: number): string =>
    join(folder, `${segmentName(segment)}.group-${group}.json`);

/** The names in the folder that match `pattern`; none when the folder does not exist. */
const matchingNames = (folder: string, pattern: RegExp): RegExpExecArray[] => {
    let names: string[];
    try {
        names = readdirSync(folder);
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") {
            return [];
        }
        throw error;
    }
    return names.map((name) => pattern.exec(name)).filter((match): match is RegExpExecArray => match !== null);
};

/** The segments in the folder, oldest first; none when the folder does not exist. */
export const listSegments = (folder: string): number[] =>
    matchingNames(folder, SEGMENT_NAME)
        .map((match) => Number(match[1]))
        .sort((a, b) => a - b);

/** The deferred groups' files in the folder, with their segments. */
export const listGroups = (folder: string): Array<{ segment: number; group: number }> =>
    matchingNames(folder, GROUP_NAME).map((match) => ({ segment: Number(match[1]), group: Number(match[2]) }));

/** A deferred group's ids as its file holds them; undefined when the file is not a list of ids. */
export const parseGroup = (text: string): string[] | undefined => {
    try {
        const ids: unknown = JSON.parse(text);
        return Array.isArray(ids) && ids.every((id) => typeof id === "string") ? (ids as string[]) : undefined;
    } catch {
        return undefined;
    }
};

/** Where a record starts, as one number: ordered like the records, unique across segments. */
export const positionOf = (segment: number, offset: number): number => segment * 2 ** 32 + offset;

export const HEADER_BYTES = 8;
/** A length past this is no record of ours: the bytes are torn or foreign. */
export const MAX_PAYLOAD_BYTES = 512 * 1024 * 1024;

/** Encodes the event; its `deferredGroup`, if any, is referred to by `group`, the number its file has. */
export const encodeRecord = (
    { event, createdAt, deliveries, deferred, body }: JournaledEvent,
    group?: number,
): Buffer => {
    const pairs = deliveries.map(({ id, webhookId }) => [id, webhookId]);
    const head = JSON.stringify(
        group === undefined ? [event, createdAt, pairs, deferred] : [event, createdAt, pairs, deferred, group],
    );
    const headBytes = Buffer.byteLength(head);
    const payloadBytes = 4 + headBytes + Buffer.byteLength(body);
    const record = Buffer.allocUnsafe(HEADER_BYTES + payloadBytes);
    record.writeUInt32LE(payloadBytes, 0);
    record.writeUInt32LE(headBytes, HEADER_BYTES);
    record.write(head, HEADER_BYTES + 4, "utf8");
    record.write(body, HEADER_BYTES + 4 + headBytes, "utf8");
    record.writeUInt32LE(crc32(record.subarray(HEADER_BYTES)), 4);
    return record;
};

export type DecodedRecord = Omit<JournaledEvent, "deferredGroup"> & {
    bytes: number;
    /** The number of the deferred group the record refers to, if any. */
    group?: number;
};

export type Decoding =
    | { kind: "record"; record: DecodedRecord }
    /** Fewer bytes than the record needs: the rest may still be written. */
    | { kind: "incomplete"; needs: number }
    /** Bytes that are no record: torn by a crash mid-write, or damaged. */
    | { kind: "invalid" };

type Head =
    | [string, number, Array<[string, string]>, string[]]
    | [string, number, Array<[string, string]>, string[], number];

const isHead = (value: unknown): value is Head =>
    Array.isArray(value) &&
    (value.length === 4 || (value.length === 5 && Number.isSafeInteger(value[4]))) &&
    typeof value[0] === "string" &&
    typeof value[1] === "number" &&
    Array.isArray(value[2]) &&
    Array.isArray(value[3]);

/** The record at `start` of `bytes` (which hold `end` bytes). */
export const decodeRecord = (bytes: Buffer, start: number, end: number): Decoding => {
    if (end - start < HEADER_BYTES) {
        return { kind: "incomplete", needs: HEADER_BYTES };
    }
    const payloadBytes = bytes.readUInt32LE(start);
    if (payloadBytes < 4 || payloadBytes > MAX_PAYLOAD_BYTES) {
        return { kind: "invalid" };
    }
    const total = HEADER_BYTES + payloadBytes;
    if (end - start < total) {
        return { kind: "incomplete", needs: total };
    }
    const payload = bytes.subarray(start + HEADER_BYTES, start + total);
    if (crc32(payload) !== bytes.readUInt32LE(start + 4)) {
        return { kind: "invalid" };
    }
    const headBytes = payload.readUInt32LE(0);
    if (headBytes > payloadBytes - 4) {
        return { kind: "invalid" };
    }
    let head: unknown;
    try {
        head = JSON.parse(payload.toString("utf8", 4, 4 + headBytes));
    } catch {
        return { kind: "invalid" };
    }
    if (!isHead(head)) {
        return { kind: "invalid" };
    }
    const [event, createdAt, pairs, deferred, group] = head;
    const deliveries: OwedDelivery[] = pairs.map(([id, webhookId]) => ({ id, webhookId }));
    const body = payload.toString("utf8", 4 + headBytes);
    return {
        kind: "record",
        record: {
            event,
            createdAt,
            deliveries,
            deferred,
            body,
            bytes: total,
            ...(group === undefined ? {} : { group }),
        },
    };
};
