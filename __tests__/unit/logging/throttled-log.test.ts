import { ThrottledLog } from "../../../src/logging/throttled-log";

describe("a throttled log", () => {
    it("writes a recurring failure once per interval, then says how many it left out", () => {
        const lines: string[] = [];
        let now = 0;
        const log = new ThrottledLog(
            (line) => lines.push(line),
            () => now,
            1_000,
        );

        for (let index = 0; index < 500; index++) {
            log.write("disk", "disk full");
        }
        now = 1_000;
        log.write("disk", "disk full");

        expect(lines).toEqual(["disk full", "disk full (and 499 more like it since the last line)"]);
    });

    it("keeps topics apart, and writes a reset topic at once", () => {
        const lines: string[] = [];
        const log = new ThrottledLog(
            (line) => lines.push(line),
            () => 0,
            1_000,
        );

        log.write("a", "first a");
        log.write("b", "first b");
        log.reset("a");
        log.write("a", "second a");

        expect(lines).toEqual(["first a", "first b", "second a"]);
    });
});
