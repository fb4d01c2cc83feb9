import { AnnouncementQueue } from "../../../src/engine/announcement-queue";

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

const announcements = (from: number, to: number) =>
    Array.from({ length: to - from + 1 }, (_, n) => ({ name: "webhooks.broadcasted", data: { n: from + n } }));

describe("AnnouncementQueue", () => {
    it("dispatches a slice of the node's loop at once and the rest in the turns after, in order", async () => {
        const dispatched: number[] = [];
        // Each dispatch takes 1 ms on this clock; a slice is 3 ms.
        let clock = 0;
        const queue = new AnnouncementQueue(
            (_name, data) => {
                dispatched.push((data as { n: number }).n);
                clock += 1;
            },
            3,
            () => clock,
        );
        queue.push(announcements(1, 5));
        expect(dispatched).toEqual([1, 2, 3]);
        // Behind those still waiting: nothing of it goes out before them.
        queue.push(announcements(6, 8));
        expect(dispatched).toEqual([1, 2, 3]);
        expect(queue.waiting).toBe(5);
        await nextTurn();
        expect(dispatched).toEqual([1, 2, 3, 4, 5, 6]);
        await nextTurn();
        expect(dispatched).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
        expect(queue.waiting).toBe(0);
    });

    it("flushes everything waiting at once, and a failing dispatch stops nothing", async () => {
        const dispatched: number[] = [];
        let clock = 0;
        const queue = new AnnouncementQueue(
            (_name, data) => {
                clock += 10;
                const n = (data as { n: number }).n;
                if (n === 2) {
                    throw new Error("a kernel listener failed");
                }
                dispatched.push(n);
            },
            1,
            () => clock,
        );
        queue.push(announcements(1, 4));
        expect(dispatched).toEqual([1]);
        queue.flush();
        expect(dispatched).toEqual([1, 3, 4]);
        await nextTurn();
        expect(dispatched).toEqual([1, 3, 4]);
        queue.push(announcements(5, 5));
        await nextTurn();
        expect(dispatched).toEqual([1, 3, 4, 5]);
    });
});
