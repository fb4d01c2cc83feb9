import { StorageHealth } from "../../../src/store/storage-health";

const full = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });

describe("StorageHealth's log", () => {
    it("logs a flapping file once a minute, with the flaps counted, and a recovery only when its degradation was logged", () => {
        const clock = { now: 0 };
        const lines: string[] = [];
        const health = new StorageHealth(
            "/data/webhooks.sqlite",
            { warning: (line) => lines.push(`warning ${line}`), info: (line) => lines.push(`info ${line}`) },
            () => clock.now,
        );
        for (let flap = 0; flap < 5; flap++) {
            health.failed("outcomes", full);
            clock.now += 1_000;
            health.succeeded("outcomes");
        }
        expect(lines).toEqual([
            "warning storage degraded: /data/webhooks.sqlite: database or disk is full (SQLITE_FULL), writing attempt outcomes (nothing is sent until they are written)",
            "info storage recovered: /data/webhooks.sqlite accepts writes again after 1000 ms",
        ]);
        expect(health.snapshot().state).toBe("ok");

        clock.now += 60_000;
        health.failed("journal", full);
        expect(health.snapshot().state).toBe("degraded");
        expect(lines[2]).toMatch(/writing the journal .*\(and 4 more like it since the last line\)$/);
        health.succeeded("journal");
        expect(lines[3]).toMatch(/^info storage recovered/);
    });
});
