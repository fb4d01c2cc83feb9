import { JournalExpander } from "../../../src/delivery/journal-expander";
import { ExpandedEntry, JournalEntry } from "../../../src/store/journal-entry";

/** A journal in memory whose commits take `commitMs` on a clock the test holds. */
const journalOf = (commitMs: number) => {
    const clock = { now: 0 };
    const entries: JournalEntry[] = [];
    const commits: number[] = [];
    let seq = 0;
    const journal = {
        oldest: (limit: number) => entries.slice(0, limit),
        commit: (ready: readonly ExpandedEntry[]) => {
            clock.now += commitMs;
            commits.push(ready.length);
            entries.splice(0, ready.length);
            return ready.flatMap((entry) => entry.deliveries);
        },
    };
    const owe = (webhooks: number): void => {
        seq++;
        entries.push({
            seq,
            event: "block.applied",
            body: "{}",
            createdAt: seq,
            deliveries: Array.from({ length: webhooks }, (_, n) => ({ id: `${seq}-${n}`, webhookId: `webhook-${n}` })),
            deferred: [],
        });
    };
    const expander = new JournalExpander({ journal, matcherOf: () => undefined, now: () => clock.now });
    return { clock, commits, owe, expander };
};

describe("the journal expander", () => {
    it("lets events owed to many webhooks gather after a costly commit, and moves them together", () => {
        const { clock, commits, owe, expander } = journalOf(4);
        owe(100);
        expect(expander.expand(3)).toMatchObject({ committed: 1, gatherMs: 0 });

        owe(100);
        clock.now += 5;
        owe(100);
        // Three times the 4 ms commit after it ended: 12 ms, 5 of them gone.
        expect(expander.expand(3)).toMatchObject({ committed: 0, gatherMs: 7 });
        clock.now += 7;
        expect(expander.expand(3)).toMatchObject({ committed: 2, gatherMs: 0 });
        expect(commits).toEqual([1, 2]);
    });

    it("never holds events owed to few webhooks, however long their commit took", () => {
        const { clock, commits, owe, expander } = journalOf(30);
        owe(1);
        expander.expand(3);
        owe(1);
        clock.now += 1;
        expect(expander.expand(3)).toMatchObject({ committed: 1, gatherMs: 0 });
        expect(commits).toEqual([1, 1]);
    });

    it("holds events at most 50 ms, and not when a full batch waits", () => {
        const { clock, commits, owe, expander } = journalOf(100);
        owe(100);
        expander.expand(3);
        owe(100);
        expect(expander.expand(3)).toMatchObject({ committed: 0, gatherMs: 50 });
        for (let event = 0; event < 500; event++) {
            owe(1);
        }
        clock.now += 1;
        expect(expander.expand(3).committed).toBeGreaterThan(0);
        expect(commits[1]).toBe(500);
    });
});
