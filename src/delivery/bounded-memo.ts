/**
 * `compute`, boundedMemo for the keys met lately: up to `limit` of them, all forgotten at once when
 * that many are held (a register whose targets or tokens outnumber it computes again, as without).
 */
export const boundedMemo = <V>(compute: (key: string) => V, limit: number): ((key: string) => V) => {
    const values = new Map<string, V>();
    return (key) => {
        let value = values.get(key);
        if (value === undefined) {
            value = compute(key);
            if (values.size >= limit) {
                values.clear();
            }
            values.set(key, value);
        }
        return value;
    };
};
