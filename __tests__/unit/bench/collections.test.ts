import { describeLongest, Promotions } from "../../../bench/collections";

describe("the longest of a window's collections", () => {
    it("names the longest, its length and its kind", () => {
        const text = describeLongest([
            { begin: 0, end: 4, major: false },
            { begin: 10, end: 22.5, major: true },
            { begin: 30, end: 33, major: false },
        ]);

        expect(text).toBe("12.5 ms (major)");
    });

    it("says none for a window without any", () => {
        expect(describeLongest([])).toBe("none");
    });
});

describe("what a window's young collections promoted", () => {
    // Objects kept across several young collections are promoted; garbage that dies young is not.
    const allocate = (keep: boolean): unknown[] => {
        const kept: unknown[] = [];
        // Far more than a young generation holds (some 32 MB at most), so that most of what is kept
        // must have been promoted by the window's end, whatever the young generation's size then.
        for (let round = 0; round < 100; round++) {
            for (let index = 0; index < 20_000; index++) {
                const value = { round, index, text: `value ${index}` };
                if (keep) {
                    kept.push(value);
                }
            }
        }
        return kept;
    };

    it("counts objects that outlive the young generation, and not those that die in it", () => {
        // Garbage first: after a run of survivors V8 promotes whole young pages for a while. And
        // garbage before it: its scavenges promote what the test runner left alive in the young
        // generation, which the window's first scavenges would otherwise count (5.4 MB, seen on 24).
        allocate(false);
        const promotions = new Promotions();
        promotions.start();
        allocate(false);
        const promotedGarbage = promotions.stop();
        promotions.start();
        const kept = allocate(true);
        const promotedKeeping = promotions.stop();

        expect(kept).toHaveLength(2_000_000);
        // 2,000,000 small objects and their strings: a hundred MB and more, most of them promoted.
        expect(promotedKeeping).toBeGreaterThan(10e6);
        expect(promotedGarbage).toBeLessThan(promotedKeeping / 10);
    });

    it("is zero when nothing was collected", () => {
        const promotions = new Promotions();
        promotions.start();
        expect(promotions.stop()).toBe(0);
    });
});
