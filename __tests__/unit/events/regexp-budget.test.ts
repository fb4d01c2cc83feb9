import { estimateRegexpCost } from "../../../src/events/regexp-budget";

const size = (source: string): number => {
    const cost = estimateRegexpCost(source);
    if (!cost.ok) {
        throw new Error(cost.reason);
    }
    return cost.size;
};

describe("the regexp program estimate", () => {
    it("counts a literal by its UTF-8 bytes", () => {
        expect(size("abc")).toBe(3);
        expect(size("é")).toBe(2);
        expect(size("€")).toBe(3);
    });

    it("expands a counted repetition into its copies", () => {
        expect(size("a{10}")).toBe(11);
        expect(size("a{2,10}")).toBe(11);
        expect(size("a{5,}")).toBe(7);
        expect(size("a*")).toBe(2);
    });

    it("multiplies nested counted repetitions", () => {
        expect(size("(?:a{10}){10}")).toBe(111);
        expect(size("(.{0,200}){0,5}z")).toBeGreaterThan(8_000);
    });

    it("adds the branches of an alternation", () => {
        expect(size("ab|cd|ef")).toBe(8);
    });

    it("weighs any-character and negated classes as RE2 compiles them for UTF-8", () => {
        expect(size(".")).toBeGreaterThan(size("[a-z]"));
        expect(size("[^a]")).toBeGreaterThan(size("[a]"));
    });

    it.each([
        ["(a)\\1", /backreferences/],
        ["(?=a)a", /lookarounds/],
        ["(?<!a)b", /lookarounds/],
        ["(", /Unterminated group/],
    ])("refuses %s", (source, reason) => {
        const cost = estimateRegexpCost(source);

        expect(cost.ok).toBe(false);
        expect(cost.ok ? "" : cost.reason).toMatch(reason);
    });
});
