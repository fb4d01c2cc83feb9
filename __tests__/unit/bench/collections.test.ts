import { describeLongest } from "../../../bench/collections";

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
