import { readFile } from "fs";

import { yieldPastTimers, yieldToEventLoop } from "../../../src/wallets/sliced-sort";

/** Runs `work` as I/O's callback runs: in the loop's poll phase, as a request's handler does. */
const inIoCallback = (work: () => Promise<void>): Promise<void> =>
    new Promise((done, fail) => readFile(__filename, () => work().then(done, fail)));

describe("yielding the node's event loop", () => {
    it("resumes after an immediate before the turn's timers, and past them when asked to", async () => {
        const order: string[] = [];
        await inIoCallback(async () => {
            setTimeout(() => order.push("a timer due"), 0);
            await yieldToEventLoop();
            order.push("after an immediate");
            await yieldPastTimers();
            order.push("past the timers");
        });

        expect(order).toEqual(["after an immediate", "a timer due", "past the timers"]);
    });

    it("resumes work yielding at once one slice per turn, in the order it yielded", async () => {
        const order: string[] = [];
        const work = async (name: string): Promise<void> => {
            for (let slice = 0; slice < 3; slice++) {
                order.push(`${name}${slice}`);
                await yieldToEventLoop();
            }
        };
        await Promise.all([work("a"), work("b")]);

        expect(order).toEqual(["a0", "b0", "a1", "b1", "a2", "b2"]);
    });
});
