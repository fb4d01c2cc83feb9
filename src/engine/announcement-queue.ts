import { performance } from "perf_hooks";

import { KernelAnnouncement } from "./messages";

/** The node's loop spends at most this long a turn dispatching the engine's announcements. */
export const ANNOUNCE_SLICE_MS = 2;

/**
 * The engine's `webhooks.broadcasted` / `webhooks.failed` announcements, dispatched to the kernel
 * on the node's thread in order, a slice of at most ANNOUNCE_SLICE_MS a turn: after a block, the
 * engine's messages bring a thousand of them, and dispatching them in one go held the node's loop
 * 15-20 ms (`npm run bench -- cost`). Most go out in the turn their message arrives in, so that
 * few wait, and survive a young-generation collection, in the queue.
 */
export class AnnouncementQueue {
    private queue: KernelAnnouncement[] = [];
    private head = 0;
    private scheduled: NodeJS.Immediate | undefined;

    public constructor(
        private readonly dispatch: (name: string, data: unknown) => void,
        private readonly sliceMs = ANNOUNCE_SLICE_MS,
        private readonly now: () => number = () => performance.now(),
    ) {}

    public get waiting(): number {
        return this.queue.length - this.head;
    }

    /** Takes a message's announcements: a slice goes out now, the rest in the turns after. */
    public push(events: readonly KernelAnnouncement[]): void {
        for (const event of events) {
            this.queue.push(event);
        }
        if (!this.scheduled) {
            this.drainSlice();
        }
    }

    /** Dispatches everything waiting now: before a message that must follow them (a disable), and at stop. */
    public flush(): void {
        this.drain(Infinity);
    }

    private drainSlice(): void {
        this.scheduled = undefined;
        this.drain(this.now() + this.sliceMs);
        if (this.waiting > 0) {
            this.scheduled = setImmediate(() => this.drainSlice());
        }
    }

    private drain(deadline: number): void {
        while (this.head < this.queue.length) {
            const { name, data } = this.queue[this.head++];
            try {
                this.dispatch(name, data);
            } catch {
                // A kernel listener's failure is the kernel's; the next announcement still goes out.
            }
            if (deadline !== Infinity && this.now() >= deadline) {
                break;
            }
        }
        if (this.head === this.queue.length) {
            this.queue = [];
            this.head = 0;
        } else if (this.head > 1024 && this.head > this.queue.length / 2) {
            this.queue = this.queue.slice(this.head);
            this.head = 0;
        }
    }
}
