import { Deadlines } from "../../../src/delivery/deadlines";

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("attempt deadlines", () => {
    it("abort an attempt still under way once its allowance has passed, with a timeout reason", async () => {
        const deadlines = new Deadlines(30);
        const { signal } = deadlines.start();

        expect(signal.aborted).toBe(false);
        await wait(80);
        expect(signal.aborted).toBe(true);
        expect((signal.reason as DOMException).name).toBe("TimeoutError");
        deadlines.stop();
    });

    it("never abort an attempt released in time, and hand its signal to a later attempt", async () => {
        const deadlines = new Deadlines(30);
        const first = deadlines.start();
        first.release();
        const second = deadlines.start();

        expect(second.signal).toBe(first.signal);
        second.release();
        await wait(80);
        expect(first.signal.aborted).toBe(false);
        deadlines.stop();
    });

    it("abort each late attempt of many started at different times, and only those", async () => {
        const deadlines = new Deadlines(40);
        const early = deadlines.start();
        await wait(20);
        const released = deadlines.start();
        const late = deadlines.start();
        released.release();

        await wait(35);
        expect(early.signal.aborted).toBe(true);
        expect(late.signal.aborted).toBe(false);
        await wait(40);
        expect(late.signal.aborted).toBe(true);
        expect(released.signal.aborted).toBe(false);
        // An aborted signal is never handed out again.
        const next = deadlines.start();
        expect([early.signal, late.signal]).not.toContain(next.signal);
        next.release();
        deadlines.stop();
    });
});
