const PREFIX = "CORE_WALLET_WEBHOOKS_";

const read = (name: string): string | undefined => {
    const value = process.env[PREFIX + name];
    return value === undefined || value.trim() === "" ? undefined : value.trim();
};

export const readString = (name: string, fallback: string): string => read(name) ?? fallback;

/** As set, spaces kept: a secret of only whitespace is refused by configSchema(), not taken for none. */
export const readSecret = (name: string, fallback: string): string => {
    const value = process.env[PREFIX + name];
    return value === undefined || value === "" ? fallback : value;
};

// Unparsable values stay strings so that configSchema() rejects them naming the option.
export const readNumber = (name: string, fallback: number): number | string => {
    const value = read(name);
    if (value === undefined) {
        return fallback;
    }
    return Number.isFinite(Number(value)) ? Number(value) : value;
};

export const readBoolean = (name: string, fallback: boolean): boolean | string => {
    const value = read(name)?.toLowerCase();
    if (value === undefined) {
        return fallback;
    }
    if (value === "false" || value === "0" || value === "no") {
        return false;
    }
    if (value === "true" || value === "1" || value === "yes") {
        return true;
    }
    return value;
};

export const readList = (name: string, fallback: string[]): string[] => {
    const value = read(name);
    return value === undefined
        ? fallback
        : value
              .split(",")
              .map((item) => item.trim())
              .filter((item) => item.length > 0);
};
