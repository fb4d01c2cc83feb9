import { randomUUID } from "crypto";
import fs from "fs";
import {
    appendFileSync,
    existsSync,
    mkdirSync,
    mkdtempSync,
    readdirSync,
    readFileSync,
    rmSync,
    writeFileSync,
} from "fs";
import { tmpdir } from "os";
import { join } from "path";

import { JournalExpander } from "../../src/delivery/journal-expander";
import { compileMatcher } from "../../src/events/matcher";
import { RegexpPool } from "../../src/events/regexp-pool";
import { openStore, StoreConnections } from "../../src/store/database";
import { DeliveryStore } from "../../src/store/delivery-store";
import { JournaledEvent } from "../../src/store/journal-entry";
import { journalCursorOf, JournalReader } from "../../src/store/journal-reader";
import { encodeRecord, journalFolderOf, segmentPath } from "../../src/store/journal-segments";
import { JournalWriter } from "../../src/store/journal-writer";
import { eventually } from "../support/http";
import { addWebhookRow } from "../support/webhook-rows";

const eventFor = (webhookIds: string[], height: number, body?: string): JournaledEvent => ({
    event: "block.applied",
    body: body ?? JSON.stringify({ timestamp: height, event: "block.applied", data: { height } }),
    createdAt: height,
    deliveries: webhookIds.map((webhookId) => ({ id: randomUUID(), webhookId })),
    deferred: [],
});

describe("the journal's files", () => {
    let dir: string;
    let file: string;
    let folder: string;
    let store: StoreConnections;
    let skipped: Array<{ segment: number; bytes: number }>;
    let lostGroups: Array<{ segment: number; group: number }>;
    let unreadable: string[];
    let unreadablePassed: number;
    let damaged: Array<{ segment: number; offset: number; bytes: number }>;
    let segmentsLost: Array<{ segment: number; reason: string }>;

    const writer = (segmentBytes = 64 * 1024 * 1024): JournalWriter =>
        new JournalWriter({ folder, segmentBytes, readCursor: journalCursorOf(store.outbox) });
    const reader = (): JournalReader =>
        new JournalReader(store.outbox, {
            folder,
            onSkipped: (segment, bytes) => skipped.push({ segment, bytes }),
            onDamaged: (segment, offset, bytes) => damaged.push({ segment, offset, bytes }),
            onSegmentLost: (segment, reason) => segmentsLost.push({ segment, reason }),
            onGroupLost: (segment, group) => lostGroups.push({ segment, group }),
            onGroupUnreadable: (error) => unreadable.push(error.message),
            onUnreadableGroupsPassed: () => unreadablePassed++,
        });
    /** Moves everything readable into delivery rows, as the engine does; returns the event bodies' heights. */
    const expandAll = (journal: JournalReader): number[] => {
        const heights: number[] = [];
        const expander = new JournalExpander({
            journal: {
                oldest: (limit) => journal.oldest(limit),
                commit: (entries) => {
                    entries.forEach((entry) => heights.push(entry.createdAt));
                    return journal.commit(entries);
                },
            },
            matcherOf: () => undefined,
            now: () => 0,
        });
        expect(expander.expand(Infinity).drained).toBe(true);
        return heights;
    };
    const pendingIds = (webhookId: string): string[] =>
        new DeliveryStore(store.outbox).dueOf(webhookId, Number.MAX_SAFE_INTEGER, 1000).map(({ id }) => id);

    beforeEach(() => {
        dir = mkdtempSync(join(tmpdir(), "cww-journal-files-"));
        file = join(dir, "webhooks.sqlite");
        folder = journalFolderOf(file);
        store = openStore(file);
        skipped = [];
        lostGroups = [];
        unreadable = [];
        unreadablePassed = 0;
        damaged = [];
        segmentsLost = [];
    });

    afterEach(() => {
        store.close();
        rmSync(dir, { recursive: true, force: true });
    });

    it("turns every appended event into its deliveries once, in order, and deletes the segments it passed", () => {
        const hook = addWebhookRow(store);
        const small = writer(600);
        const appended = Array.from({ length: 12 }, (_, index) => eventFor([hook], index + 1));
        appended.forEach((event) => small.append(event));
        expect(readdirSync(folder).length).toBeGreaterThan(2);
        expect(small.backlog()).toBe(12);

        const journal = reader();
        expect(expandAll(journal)).toEqual(appended.map((event) => event.createdAt));
        expect(expandAll(journal)).toEqual([]);
        expect(pendingIds(hook).sort()).toEqual(appended.map((event) => event.deliveries[0].id).sort());
        expect(small.backlog()).toBe(0);
        // Only the segment being written is left.
        expect(readdirSync(folder)).toHaveLength(1);
        journal.close();
        small.close();
    });

    it("reads on across restarts from the cursor committed with the deliveries, counting the backlog left", () => {
        const hook = addWebhookRow(store);
        const first = writer();
        [1, 2, 3].forEach((height) => first.append(eventFor([hook], height)));
        const journal = reader();
        expect(journal.oldest(2).map((entry) => entry.createdAt)).toEqual([1, 2]);
        journal.commit(journal.oldest(1));
        journal.close();
        first.close();

        const second = writer();
        expect(second.backlog()).toBe(2);
        [4, 5].forEach((height) => second.append(eventFor([hook], height)));
        expect(second.backlog()).toBe(4);
        const again = reader();
        expect(expandAll(again)).toEqual([2, 3, 4, 5]);
        expect(second.backlog()).toBe(0);
        expect(pendingIds(hook)).toHaveLength(5);
        again.close();
        second.close();
    });

    it("names a segment that is not a file, in the writer's count at start and in the reader", () => {
        const hook = addWebhookRow(store);
        const first = writer();
        first.append(eventFor([hook], 1));
        first.close();
        rmSync(segmentPath(folder, 1));
        mkdirSync(segmentPath(folder, 1));
        const notAFile = `${segmentPath(folder, 1)} is in the journal's folder but is not a file`;

        expect(() => writer()).toThrow(notAFile);
        expect(() => reader().oldest(1)).toThrow(notAFile);
    });

    it("writes on into a folder made again when the journal's folder is deleted under it, groups included", () => {
        const hook = addWebhookRow(store);
        const running = writer();
        running.append(eventFor([hook], 1));
        rmSync(folder, { recursive: true, force: true });

        running.append(eventFor([hook], 2));
        running.append({ ...eventFor([], 3), deferredGroup: [hook] });
        expect(readdirSync(folder).length).toBeGreaterThanOrEqual(2);

        // Event 1 went with the folder before any reader opened its segment; nothing after it is lost.
        const journal = reader();
        expect(expandAll(journal)).toEqual([2, 3]);
        journal.close();
        running.close();
    });

    it("skips a record torn by a crash at the end of a segment, and says so", () => {
        const hook = addWebhookRow(store);
        const first = writer();
        first.append(eventFor([hook], 1));
        const torn = encodeRecord(eventFor([hook], 2));
        appendFileSync(segmentPath(folder, 1), torn.subarray(0, torn.length - 5));
        const journal = reader();
        expect(expandAll(journal)).toEqual([1]);
        // Nothing later exists yet: the torn bytes may still be a record being written.
        expect(skipped).toEqual([]);

        first.close();
        const second = writer();
        second.append(eventFor([hook], 3));
        expect(expandAll(journal)).toEqual([3]);
        expect(skipped).toEqual([{ segment: 1, bytes: torn.length - 5 }]);
        expect(pendingIds(hook)).toHaveLength(2);
        journal.close();
        second.close();
    });

    /** Appends events 1..count to one segment; returns each record's offset and length. */
    const backlogOf = (
        journalWriter: JournalWriter,
        hook: string,
        count: number,
    ): Array<{ offset: number; length: number }> => {
        let offset = 0;
        return Array.from({ length: count }, (_, index) => {
            const event = eventFor([hook], index + 1);
            journalWriter.append(event);
            const length = encodeRecord(event).length;
            offset += length;
            return { offset: offset - length, length };
        });
    };

    it("passes over only a record whose checksum is wrong (a flipped byte), reads on from the next, and says which", () => {
        const hook = addWebhookRow(store);
        const first = writer();
        const records = backlogOf(first, hook, 1000);
        const damagedRecord = records[99];
        const file = fs.openSync(segmentPath(folder, 1), "r+");
        const byte = Buffer.alloc(1);
        fs.readSync(file, byte, 0, 1, damagedRecord.offset + 20);
        fs.writeSync(file, Buffer.from([byte[0] ^ 0xff]), 0, 1, damagedRecord.offset + 20);
        fs.closeSync(file);

        const journal = reader();
        const heights = expandAll(journal);
        expect(heights).toHaveLength(999);
        expect(heights).not.toContain(100);
        expect(heights).toEqual([
            ...Array.from({ length: 99 }, (_, i) => i + 1),
            ...Array.from({ length: 900 }, (_, i) => i + 101),
        ]);
        expect(damaged).toEqual([{ segment: 1, offset: damagedRecord.offset, bytes: damagedRecord.length }]);
        expect(skipped).toEqual([]);
        journal.close();
        first.close();
    });

    it("passes over a record whose length is wrong once the segment is finished, unlike a record torn at its end", () => {
        const hook = addWebhookRow(store);
        const first = writer();
        const records = backlogOf(first, hook, 50);
        const file = fs.openSync(segmentPath(folder, 1), "r+");
        // A length that runs past the segment's end: read alone, it looks like a record still being written.
        fs.writeSync(file, Buffer.from([0xff, 0xff, 0xff, 0x0f]), 0, 4, records[9].offset);
        fs.closeSync(file);
        first.close();
        const second = writer();
        second.append(eventFor([hook], 51));

        const journal = reader();
        const heights = expandAll(journal);
        expect(heights).toEqual([
            ...Array.from({ length: 9 }, (_, i) => i + 1),
            ...Array.from({ length: 41 }, (_, i) => i + 11),
        ]);
        expect(damaged).toEqual([{ segment: 1, offset: records[9].offset, bytes: records[9].length }]);
        expect(skipped).toEqual([]);
        journal.close();
        second.close();
    });

    it.each([
        [
            "cut short",
            (path: string) => fs.truncateSync(path, 0),
            /^it holds 0 bytes, and \d+ had been read: it was cut short/,
        ],
        [
            "gone",
            (path: string) => rmSync(path),
            /^it is gone, and \d+ bytes of it had been read: the events after them are lost$/,
        ],
    ])("says so when a segment it had read part of is %s", (_what, damage, reason) => {
        const hook = addWebhookRow(store);
        const first = writer();
        backlogOf(first, hook, 10);
        const journal = reader();
        journal.commit(journal.oldest(4));
        journal.close();
        first.close();
        damage(segmentPath(folder, 1));
        const second = writer();
        second.append(eventFor([hook], 11));

        const again = reader();
        expect(expandAll(again)).toEqual([11]);
        expect(segmentsLost).toEqual([{ segment: 1, reason: expect.stringMatching(reason) }]);
        again.close();
        second.close();
    });

    it("reads a record that arrives in parts, and one larger than its read buffer", () => {
        const hook = addWebhookRow(store);
        const journal = reader();
        const first = writer();
        first.close();
        const record = encodeRecord(eventFor([hook], 1));
        const path = segmentPath(folder, 1);
        appendFileSync(path, record.subarray(0, 10));
        expect(expandAll(journal)).toEqual([]);
        appendFileSync(path, record.subarray(10));
        expect(expandAll(journal)).toEqual([1]);
        const large = eventFor([hook], 2, JSON.stringify({ data: "x".repeat(3 * 1024 * 1024) }));
        appendFileSync(path, encodeRecord(large));
        const [entry] = journal.oldest(10);
        expect(entry.body).toBe(large.body);
        expect(expandAll(journal)).toEqual([2]);
        journal.close();
    });

    it("owes nothing to a webhook deleted since its event was journaled", () => {
        const kept = addWebhookRow(store);
        const deleted = addWebhookRow(store);
        const files = writer();
        files.append(eventFor([kept, deleted], 1));
        store.register.prepare("DELETE FROM webhooks WHERE id = ?").run(deleted);
        expect(expandAll(reader())).toEqual([1]);
        expect(pendingIds(kept)).toHaveLength(1);
        expect(pendingIds(deleted)).toHaveLength(0);
        files.close();
    });

    it("writes a deferred group once a segment, resolves it for every record, and deletes it with its segment", () => {
        const hook = addWebhookRow(store);
        const group = Object.freeze(["pattern-1", "pattern-2", "pattern-3"]);
        const small = writer(700);
        const appended = Array.from({ length: 12 }, (_, index) => ({
            ...eventFor([hook], index + 1),
            deferred: index % 3 === 0 ? ["out-of-time"] : [],
            deferredGroup: group,
        }));
        appended.forEach((event) => small.append(event));
        const names = readdirSync(folder);
        const segments = names.filter((name) => name.endsWith(".log"));
        const groups = names.filter((name) => name.includes(".group-"));
        expect(segments.length).toBeGreaterThan(2);
        // One file per segment, not one per record: the records only carry its number.
        expect(groups.sort()).toEqual(segments.map((name) => name.replace(".log", ".group-1.json")).sort());

        const journal = reader();
        const expected = appended.map((event) => [...event.deferred, ...group]);
        expect(journal.oldest(100).map((entry) => entry.deferred)).toEqual(expected);
        journal.commit(journal.oldest(5));
        journal.close();

        // A restart reads on from the cursor, mid-segment, and still finds each record's group.
        const again = reader();
        expect(again.oldest(100).map((entry) => entry.deferred)).toEqual(expected.slice(5));
        expect(expandAll(again)).toHaveLength(7);
        expect(readdirSync(folder).sort()).toEqual(
            [segments.sort()[segments.length - 1], groups.sort()[groups.length - 1]].sort(),
        );
        expect(lostGroups).toEqual([]);
        again.close();
        small.close();
    });

    it("owes a delivery to each webhook of a group without conditions, its id born in the engine, the body never read", () => {
        const [first, second] = [addWebhookRow(store), addWebhookRow(store)];
        const files = writer();
        const group = Object.freeze([first, second]);
        // Not JSON: neither a webhook without conditions nor a fresh id needs the payload.
        [1, 2].forEach((height) =>
            files.append({ ...eventFor([], height, `not json ${height}`), deferredGroup: group }),
        );
        const options = { regexpInputChars: 1024, regexps: new RegexpPool(10) };
        const journal = reader();
        const expander = new JournalExpander({
            journal,
            matcherOf: () => compileMatcher([], "any", options),
            now: () => 0,
        });

        const { drained, deliveries } = expander.expand(Infinity);

        expect(drained).toBe(true);
        expect(deliveries.map(({ webhookId, body }) => [webhookId, body])).toEqual([
            [first, "not json 1"],
            [second, "not json 1"],
            [first, "not json 2"],
            [second, "not json 2"],
        ]);
        const ids = deliveries.map(({ id }) => id);
        expect(new Set(ids).size).toBe(4);
        ids.forEach((id) =>
            expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        );
        expect([...pendingIds(first), ...pendingIds(second)].sort()).toEqual([...ids].sort());
        journal.close();
        files.close();
    });

    it("writes a group prepared ahead before any event refers to it, and the event writes only its record", () => {
        const hook = addWebhookRow(store);
        const group = Object.freeze(["pattern-1", "pattern-2"]);
        const files = writer();
        files.prepareGroup(group);
        const path = join(folder, "000000000001.group-1.json");
        expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(group);
        // Were the event to write the file again, the sentinel would be gone.
        writeFileSync(path, JSON.stringify(["sentinel"]));

        files.append({ ...eventFor([hook], 1), deferredGroup: group });
        files.rehearse({ ...eventFor([hook], 2), deferredGroup: group });

        const journal = reader();
        expect(journal.oldest(10).map((entry) => entry.deferred)).toEqual([["sentinel"]]);
        expect(readdirSync(folder).filter((name) => name.endsWith(".json"))).toEqual(["000000000001.group-1.json"]);
        journal.close();
        files.close();
    });

    it("forgets a group prepared ahead once it is replaced, unless a record referred to it", () => {
        const hook = addWebhookRow(store);
        const files = writer();
        const groupFiles = () =>
            readdirSync(folder)
                .filter((name) => name.includes(".group-"))
                .sort();
        const first = Object.freeze(["pattern-1"]);
        const second = Object.freeze(["pattern-1", "pattern-2"]);
        const third = Object.freeze(["pattern-1", "pattern-2", "pattern-3"]);

        files.prepareGroup(first);
        files.prepareGroup(second, first);
        expect(groupFiles()).toEqual(["000000000001.group-2.json"]);

        files.append({ ...eventFor([hook], 1), deferredGroup: second });
        files.prepareGroup(third, second);
        files.prepareGroup(undefined, third);
        // The second stays: a record refers to it. The third never was.
        expect(groupFiles()).toEqual(["000000000001.group-2.json"]);

        files.append({ ...eventFor([hook], 2), deferredGroup: third });
        const journal = reader();
        expect(journal.oldest(10).map((entry) => entry.deferred)).toEqual([second, third]);
        expect(lostGroups).toEqual([]);
        journal.close();
        files.close();
    });

    it("leaves a group it could not prepare to the first event that refers to it", () => {
        const hook = addWebhookRow(store);
        const group = Object.freeze(["pattern-1"]);
        const files = writer();
        const path = join(folder, "000000000001.group-1.json");
        // A directory in its place: writing the file fails.
        mkdirSync(path);
        expect(() => files.prepareGroup(group)).not.toThrow();
        rmSync(path, { recursive: true });

        files.append({ ...eventFor([hook], 1), deferredGroup: group });
        expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(group);
        const journal = reader();
        expect(journal.oldest(10).map((entry) => entry.deferred)).toEqual([group]);
        journal.close();
        files.close();
    });

    it("says so when a deferred group's file is gone, and reads on without it", () => {
        const hook = addWebhookRow(store);
        const files = writer();
        files.append({ ...eventFor([hook], 1), deferred: ["out-of-time"], deferredGroup: ["pattern-1"] });
        rmSync(join(folder, "000000000001.group-1.json"));

        const journal = reader();
        expect(journal.oldest(10).map((entry) => entry.deferred)).toEqual([["out-of-time"]]);
        expect(lostGroups).toEqual([{ segment: 1, group: 1 }]);
        expect(expandAll(journal)).toEqual([1]);
        expect(pendingIds(hook)).toHaveLength(1);
        journal.close();
        files.close();
    });

    it("waits for a deferred group it cannot read for now, losing nothing and reading nothing twice", () => {
        const hook = addWebhookRow(store);
        const files = writer();
        files.append(eventFor([hook], 1));
        files.append({ ...eventFor([hook], 2), deferredGroup: ["pattern-1"] });
        // Too many open files: an error that passes.
        const reads = jest.spyOn(fs, "readFileSync").mockImplementation(() => {
            throw Object.assign(new Error("EMFILE: too many open files, open"), { code: "EMFILE" });
        });

        const journal = reader();
        try {
            expect(() => journal.oldest(10)).toThrow(/EMFILE/);
            expect(() => journal.oldest(10)).toThrow(/EMFILE/);
        } finally {
            reads.mockRestore();
        }

        expect(journal.oldest(10).map((entry) => [entry.createdAt, entry.deferred])).toEqual([
            [1, []],
            [2, ["pattern-1"]],
        ]);
        expect(lostGroups).toEqual([]);
        expect(unreadable).toEqual([]);
        expect(expandAll(journal)).toEqual([1, 2]);
        expect(pendingIds(hook)).toHaveLength(2);
        journal.close();
        files.close();
    });

    it("passes over a deferred group that can never be read as it is, naming its file, and delivers everything else", () => {
        const hook = addWebhookRow(store);
        const files = writer(600);
        files.append(eventFor([hook], 1));
        files.append({ ...eventFor([hook], 2), deferred: ["out-of-time"], deferredGroup: ["pattern-1"] });
        const path = join(folder, "000000000001.group-1.json");
        // A folder in its place: reading it fails with EISDIR, every time.
        rmSync(path);
        mkdirSync(path);
        Array.from({ length: 6 }, (_, index) => files.append(eventFor([hook], index + 3)));

        const journal = reader();
        expect(journal.oldest(10).map((entry) => [entry.createdAt, entry.deferred])).toEqual([
            [1, []],
            [2, ["out-of-time"]],
            ...Array.from({ length: 6 }, (_, index) => [index + 3, []]),
        ]);
        expect(lostGroups).toEqual([{ segment: 1, group: 1 }]);
        expect(unreadable).toEqual([expect.stringMatching(new RegExp(`^${path}: EISDIR`))]);
        expect(expandAll(journal)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
        expect(pendingIds(hook)).toHaveLength(8);
        // Its segment passed and deleted: the storage is no longer degraded by it.
        expect(unreadablePassed).toBe(1);
        journal.close();
        files.close();
    });

    it("looks for the writer's next segment by name at the journal's end, and lists the folder only for a gap, at most once a second", async () => {
        const hook = addWebhookRow(store);
        const files = writer();
        files.append(eventFor([hook], 1));
        const [current] = readdirSync(folder).map((name) => Number(/\d+/.exec(name)?.[0]));
        const journal = reader();
        expect(expandAll(journal)).toEqual([1]);

        const listings = jest.spyOn(fs, "readdirSync");
        for (let pass = 0; pass < 100; pass++) {
            expect(expandAll(journal)).toEqual([]);
        }
        // Each pass at the end used to list the folder.
        expect(listings.mock.calls.length).toBeLessThanOrEqual(1);
        // A segment after a gap (the one before it never written) is found by a listing, within a second.
        writeFileSync(segmentPath(folder, current + 2), encodeRecord(eventFor([hook], 2)));
        const found = await eventually(async () => {
            const heights = expandAll(journal);
            return heights.length > 0 ? heights : undefined;
        });
        expect(found).toEqual([2]);
        listings.mockRestore();
        // And the writer's next segment at once, by name.
        writeFileSync(segmentPath(folder, current + 3), encodeRecord(eventFor([hook], 3)));
        expect(expandAll(journal)).toEqual([3]);
        expect(pendingIds(hook)).toHaveLength(3);
        journal.close();
        files.close();
    });

    it("leaves no empty segment behind a writer that wrote nothing", () => {
        writer().close();
        expect(existsSync(folder)).toBe(true);
        expect(readdirSync(folder)).toEqual([]);
    });
});
