/**
 * Counts how often a 10 ms timer fires while `work` runs for `windowMs`: a loop that never yields
 * (a busy loop of microtasks, a synchronous stall) leaves it near zero.
 */
export const timerTicksDuring = async (windowMs: number, work: () => Promise<void> = async () => undefined) => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    try {
        await Promise.all([work(), new Promise((resolve) => setTimeout(resolve, windowMs))]);
    } finally {
        clearInterval(timer);
    }
    return ticks;
};

/** The turns of the event loop since it was made, counted by an immediate that queues itself until stopped. */
export const turnCounter = (): { readonly turn: number; stop: () => void } => {
    let turn = 0;
    let counting = true;
    const count = (): void => {
        turn++;
        if (counting) {
            setImmediate(count);
        }
    };
    setImmediate(count);
    return {
        get turn() {
            return turn;
        },
        stop: () => (counting = false),
    };
};
