import RE2 from "re2";

interface Pooled {
    expression: RE2;
    users: number;
}

/**
 * The compiled regular expressions of the register, one per distinct pattern, shared by every
 * condition that uses it. RE2 keeps a DFA cache per compiled pattern that grows with the inputs it
 * meets, up to about 3.5 MB, so memory is bounded by the number of distinct patterns, and that is
 * what `limits.regexpPatterns` caps.
 */
export class RegexpPool {
    private readonly pooled = new Map<string, Pooled>();

    public constructor(public readonly maxPatterns: number) {}

    /** The compiled pattern, counted as used once more; compiled on first use. Throws for a pattern RE2 refuses. */
    public acquire(source: string): RE2 {
        let entry = this.pooled.get(source);
        if (!entry) {
            entry = { expression: new RE2(source), users: 0 };
            this.pooled.set(source, entry);
        }
        entry.users++;
        return entry.expression;
    }

    public release(source: string): void {
        const entry = this.pooled.get(source);
        if (entry && --entry.users <= 0) {
            this.pooled.delete(source);
        }
    }

    /** How many distinct patterns there would be after a matcher gives back `releasing` and takes `adding`. */
    public sizeAfter(adding: readonly string[], releasing: readonly string[]): number {
        const kept = new Set(adding);
        let size = this.pooled.size;
        for (const source of new Set(releasing)) {
            const released = releasing.filter((candidate) => candidate === source).length;
            const users = this.pooled.get(source)?.users;
            if (!kept.has(source) && users !== undefined && users <= released) {
                size--;
            }
        }
        for (const source of kept) {
            if (!this.pooled.has(source)) {
                size++;
            }
        }
        return size;
    }

    public get size(): number {
        return this.pooled.size;
    }
}
