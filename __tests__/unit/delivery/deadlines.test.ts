import { setFlagsFromString } from "v8";
import { runInNewContext } from "vm";

import { Deadlines } from "../../../src/delivery/deadlines";

/** Turns the fake clock (timers and performance.now) forward. */
const wait = (ms: number) => jest.advanceTimersByTimeAsync(ms);

describe("attempt deadlines", () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it("expire an attempt still under way once its allowance has passed, once", async () => {
        const deadlines = new Deadlines(30);
        let expiries = 0;
        deadlines.start(() => expiries++);

        expect(expiries).toBe(0);
        await wait(80);
        expect(expiries).toBe(1);
        await wait(60);
        expect(expiries).toBe(1);
        deadlines.stop();
    });

    it("never expire an attempt released in time", async () => {
        const deadlines = new Deadlines(30);
        let expiries = 0;
        const release = deadlines.start(() => expiries++);
        release();

        await wait(80);
        expect(expiries).toBe(0);
        deadlines.stop();
    });

    it("let go of what a released attempt held, long before its deadline", async () => {
        setFlagsFromString("--expose-gc");
        const collect = runInNewContext("gc") as () => void;
        const deadlines = new Deadlines(60_000);
        const held = (): WeakRef<object> => {
            const answer = { body: Buffer.alloc(1024) };
            deadlines.start(() => answer.body.fill(0))();
            return new WeakRef(answer);
        };
        const answer = held();
        // A WeakRef keeps its target until the job that made it has ended.
        jest.useRealTimers();
        await new Promise((resolve) => setImmediate(resolve));
        collect();
        expect(answer.deref()).toBeUndefined();
        deadlines.stop();
    });

    it("expire each late attempt of many started at different times, and only those", async () => {
        const deadlines = new Deadlines(40);
        const expired: string[] = [];
        deadlines.start(() => expired.push("early"));
        await wait(20);
        const release = deadlines.start(() => expired.push("released"));
        deadlines.start(() => expired.push("late"));
        release();

        await wait(35);
        expect(expired).toEqual(["early"]);
        await wait(40);
        expect(expired).toEqual(["early", "late"]);
        deadlines.stop();
    });

    it("expire nothing once stopped", async () => {
        const deadlines = new Deadlines(20);
        let expiries = 0;
        deadlines.start(() => expiries++);
        deadlines.stop();

        await wait(60);
        expect(expiries).toBe(0);
    });
});
