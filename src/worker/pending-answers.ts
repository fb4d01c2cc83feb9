/**
 * Answers awaited from a thread, by question number. Numbers are given in order and most answers
 * come back in about that order, so each waits in a slot of a ring, `number % size`; the ring
 * doubles only when the oldest question still waits a whole ring later.
 *
 * Not a Map: a Map a question is added to and taken from at every request reallocates its table
 * as it fills and empties, and the node's young collections promoted those tables (a sampling
 * heap profile of a wallet listing's load, 100,000 wallets: 0.9-1.1 MB of the 4.4-8.8 MB promoted
 * in ten seconds). The ring's two arrays are allocated once and only grow.
 */
export class PendingAnswers<T> {
    private numbers: number[];
    private waiting: Array<T | undefined>;
    private count = 0;

    public constructor(initialSize = 64) {
        this.numbers = new Array<number>(initialSize).fill(-1);
        this.waiting = new Array<T | undefined>(initialSize).fill(undefined);
    }

    public get size(): number {
        return this.count;
    }

    /** `number` is the caller's, and not waiting already. */
    public add(number: number, awaiting: T): void {
        while (this.numbers[number % this.numbers.length] !== -1) {
            this.grow();
        }
        const slot = number % this.numbers.length;
        this.numbers[slot] = number;
        this.waiting[slot] = awaiting;
        this.count++;
    }

    /** The one waiting for the answer to `number`, no longer waiting; undefined if none was. */
    public take(number: number): T | undefined {
        const slot = number % this.numbers.length;
        if (this.numbers[slot] !== number) {
            return undefined;
        }
        const awaiting = this.waiting[slot];
        this.numbers[slot] = -1;
        this.waiting[slot] = undefined;
        this.count--;
        return awaiting;
    }

    /** Every one still waiting, none waiting after. */
    public takeAll(): T[] {
        const all: T[] = [];
        for (let slot = 0; slot < this.numbers.length; slot++) {
            if (this.numbers[slot] !== -1) {
                all.push(this.waiting[slot] as T);
                this.numbers[slot] = -1;
                this.waiting[slot] = undefined;
            }
        }
        this.count = 0;
        return all;
    }

    private grow(): void {
        const numbers = this.numbers;
        const waiting = this.waiting;
        this.numbers = new Array<number>(numbers.length * 2).fill(-1);
        this.waiting = new Array<T | undefined>(numbers.length * 2).fill(undefined);
        this.count = 0;
        numbers.forEach((number, slot) => {
            if (number !== -1) {
                this.add(number, waiting[slot] as T);
            }
        });
    }
}
