/** How deep a JSON value nests, counted without recursion, so that no input can overflow the stack. */
export const depthOf = (value: unknown, stopAbove: number): number => {
    let deepest = 0;
    const stack: Array<[unknown, number]> = [[value, 1]];
    while (stack.length > 0) {
        const [current, depth] = stack.pop() as [unknown, number];
        if (current === null || typeof current !== "object") {
            continue;
        }
        deepest = Math.max(deepest, depth);
        if (deepest > stopAbove) {
            return deepest;
        }
        for (const child of Object.values(current)) {
            stack.push([child, depth + 1]);
        }
    }
    return deepest;
};
