import { mkdtempSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";

import { openStore } from "../../src/store/database";
import { killHard, spawnPluginProcess } from "../support/child";
import { eventually, requestJson } from "../support/http";
import { freePort } from "../support/ports";
import { startPlugin } from "../support/plugin-harness";
import { Receiver } from "../support/receiver";

jest.setTimeout(240_000);

const ROUNDS = 20;
const CONCURRENCY = 8;

describe("a plugin killed with SIGKILL", () => {
    it(`keeps every webhook it answered 201, ${ROUNDS} times over`, async () => {
        const dir = mkdtempSync(join(tmpdir(), "cww-crash-"));
        const acknowledged = new Set<string>();
        try {
            for (let round = 0; round < ROUNDS; round++) {
                const { child, line } = spawnPluginProcess([dir], "READY");
                const url = await line;
                let stop = false;
                const writer = async (): Promise<void> => {
                    while (!stop) {
                        try {
                            const response = await requestJson<{ data: { id: string } }>(`${url}/webhooks`, {
                                method: "POST",
                                body: { event: "block.applied", target: "http://receiver.example/x", conditions: [] },
                            });
                            if (response.status === 201) {
                                acknowledged.add(response.body.data.id);
                            }
                        } catch {
                            return; // the server is gone mid-request: that one was never acknowledged
                        }
                    }
                };
                const writers = Array.from({ length: CONCURRENCY }, writer);
                // Killed while writes are under way, after a different number of them each round.
                const before = acknowledged.size + 10 + Math.floor(Math.random() * 40);
                await eventually(async () => (acknowledged.size >= before ? true : undefined), { intervalMs: 5 });
                await killHard(child);
                stop = true;
                await Promise.all(writers);

                const store = openStore(join(dir, "webhooks.sqlite"));
                try {
                    expect(store.register.pragma("integrity_check", { simple: true })).toBe("ok");
                    const ids = new Set(
                        store.register
                            .prepare<[], { id: string }>("SELECT id FROM webhooks")
                            .all()
                            .map((row) => row.id),
                    );
                    const missing = [...acknowledged].filter((id) => !ids.has(id));
                    expect(missing).toEqual([]);
                } finally {
                    store.close();
                }
            }
            expect(acknowledged.size).toBeGreaterThan(ROUNDS);
        } finally {
            rmSync(dir, { recursive: true, force: true });
        }
    });

    it("delivers, after a restart, every delivery that was pending when it died", async () => {
        const dir = mkdtempSync(join(tmpdir(), "cww-crash-"));
        const port = await freePort();
        const { child, line } = spawnPluginProcess([dir, `http://127.0.0.1:${port}/hook`, "50"], "QUEUED");
        const webhookId = await line;
        await killHard(child);

        const receiver = await new Receiver().start(port);
        const running = await startPlugin({ delivery: { retryScheduleSeconds: [0.05] } }, { dir });
        try {
            running.plugin.outbox
                .dueOf(webhookId, Number.MAX_SAFE_INTEGER, 1000)
                .forEach((delivery) => running.plugin.outbox.redeliver(webhookId, delivery.id, Date.now()));
            running.plugin.engine.wake();
            await eventually(async () => (receiver.requests.length >= 50 ? true : undefined), { timeoutMs: 30_000 });

            const heights = receiver.requests
                .map((request) => JSON.parse(request.body).data.height)
                .sort((a, b) => a - b);
            expect(heights).toEqual(Array.from({ length: 50 }, (_, index) => index + 1));
            expect(new Set(receiver.requests.map((request) => request.headers["webhook-id"])).size).toBe(50);
        } finally {
            await running.stop();
            await receiver.stop();
        }
    });
});
