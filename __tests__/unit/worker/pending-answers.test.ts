import { PendingAnswers } from "../../../src/worker/pending-answers";

describe("PendingAnswers", () => {
    it("gives each answer to the one waiting for its number, once, in any order", () => {
        const pending = new PendingAnswers<string>(4);
        for (let number = 1; number <= 6; number++) {
            pending.add(number, `q${number}`);
        }
        expect(pending.size).toBe(6);
        expect(pending.take(4)).toBe("q4");
        expect(pending.take(4)).toBeUndefined();
        expect(pending.take(1)).toBe("q1");
        expect(pending.take(99)).toBeUndefined();
        expect(pending.size).toBe(4);
        expect([pending.take(6), pending.take(2), pending.take(5), pending.take(3)]).toEqual(["q6", "q2", "q5", "q3"]);
        expect(pending.size).toBe(0);
    });

    it("keeps an old question waiting while many later ones come and go (the ring grows around it)", () => {
        const pending = new PendingAnswers<number>(2);
        const reference = new Map<number, number>();
        pending.add(1, 1);
        reference.set(1, 1);
        // A pseudo-random mix of questions and answers, some answered long after later ones.
        let seed = 7;
        for (let number = 2; number < 3_000; number++) {
            pending.add(number, number);
            reference.set(number, number);
            seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
            const answered = number - (seed % 40);
            if (answered > 1 && reference.has(answered)) {
                expect(pending.take(answered)).toBe(answered);
                reference.delete(answered);
            }
            expect(pending.size).toBe(reference.size);
        }
        expect(pending.take(1)).toBe(1);
        reference.delete(1);
        expect(pending.takeAll().sort((a, b) => a - b)).toEqual([...reference.keys()].sort((a, b) => a - b));
        expect(pending.size).toBe(0);
        expect(pending.take(2_999)).toBeUndefined();
    });

    it("does not mistake a number for another that shares its slot", () => {
        const pending = new PendingAnswers<string>(4);
        pending.add(3, "three");
        expect(pending.take(7)).toBeUndefined();
        expect(pending.size).toBe(1);
        expect(pending.take(3)).toBe("three");
    });
});
