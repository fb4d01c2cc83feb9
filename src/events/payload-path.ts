const MISSING = Symbol("missing");
export type Missing = typeof MISSING;

export const isMissing = (value: unknown): value is Missing => value === MISSING;

const readProperty = (holder: unknown, name: string): unknown => {
    if (holder === null || (typeof holder !== "object" && typeof holder !== "function")) {
        return MISSING;
    }
    // Getters of classes count; what every object inherits (constructor, toString, __proto__) does not.
    const present =
        Object.prototype.hasOwnProperty.call(holder, name) || (name in holder && !(name in Object.prototype));
    return present ? (holder as Record<string, unknown>)[name] : MISSING;
};

/**
 * Compiles a condition key into a reader. A key names a property; a dot path reaches nested ones
 * (`asset.votes`, `transaction.recipientId`), and a property whose own name holds a dot wins.
 */
export const compilePath = (key: string): ((payload: unknown) => unknown) => {
    const segments = key.split(".");
    return (payload) => {
        const direct = readProperty(payload, key);
        if (!isMissing(direct) || segments.length === 1) {
            return direct;
        }
        let current: unknown = payload;
        for (const segment of segments) {
            current = readProperty(current, segment);
            if (isMissing(current)) {
                return MISSING;
            }
        }
        return current;
    };
};
