import { randomUUID } from "crypto";
import { closeSync, mkdtempSync, openSync, writeSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";

import { openStore } from "../../src/store/database";
import { encodeRecord, journalFolderOf, segmentPath } from "../../src/store/journal-segments";
import { JournalWriter } from "../../src/store/journal-writer";
import { eventually, requestJson } from "../support/http";
import { startPlugin } from "../support/plugin-harness";
import { Receiver } from "../support/receiver";
import { addWebhookRow } from "../support/webhook-rows";

describe("a journal damaged on disk while the node was stopped", () => {
    it("delivers every event but the damaged one, and counts it in GET /api and /metrics, at error level", async () => {
        const receiver = await new Receiver().start();
        const dir = mkdtempSync(join(tmpdir(), "cww-damaged-journal-"));
        const file = join(dir, "webhooks.sqlite");
        // A backlog an earlier run journaled and never expanded, one record of it with a flipped byte.
        const store = openStore(file);
        const hook = addWebhookRow(store);
        store.register.prepare("UPDATE webhooks SET target = ? WHERE id = ?").run(receiver.url, hook);
        store.close();
        const writer = new JournalWriter({
            folder: journalFolderOf(file),
            segmentBytes: 64 * 1024 * 1024,
            readCursor: () => ({ segment: 0, offset: 0 }),
        });
        let offset = 0;
        let damagedAt = 0;
        for (let height = 1; height <= 20; height++) {
            const event = {
                event: "block.applied",
                body: JSON.stringify({ timestamp: height, event: "block.applied", data: { height } }),
                createdAt: height,
                deliveries: [{ id: randomUUID(), webhookId: hook }],
                deferred: [],
            };
            writer.append(event);
            if (height === 7) {
                damagedAt = offset;
            }
            offset += encodeRecord(event).length;
        }
        writer.close();
        const segment = openSync(segmentPath(journalFolderOf(file), 1), "r+");
        writeSync(segment, Buffer.from("#"), 0, 1, damagedAt + 30);
        closeSync(segment);

        const running = await startPlugin({}, { dir });
        try {
            await eventually(async () => (receiver.requests.length === 19 ? true : undefined), { timeoutMs: 20_000 });
            const heights = receiver.requests.map(
                (request) => (JSON.parse(request.body) as { data: { height: number } }).data.height,
            );
            expect(heights.sort((a, b) => a - b)).toEqual([
                1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
            ]);
            const status = await requestJson<{
                data: { deliveries: { journalDamaged: { records: number; bytes: number } } };
            }>(running.url);
            expect(status.body.data.deliveries.journalDamaged.records).toBe(1);
            expect(status.body.data.deliveries.journalDamaged.bytes).toBeGreaterThan(0);
            const text = await (await fetch(`${running.url.replace(/\/api$/, "")}/metrics`)).text();
            expect(text).toMatch(/^core_wallet_webhooks_journal_damaged_records_total 1$/m);
            expect(running.logs.join("\n")).toMatch(/error: .*journal segment 1 has a damaged record at byte \d+/);
        } finally {
            await running.stop();
            await receiver.stop();
        }
    });
});
