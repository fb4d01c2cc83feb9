import ipaddr from "ipaddr.js";

/** Decides whether one IP address belongs to a list of exact addresses, CIDR ranges and `*` wildcards. */
export type AddressMatcher = (address: string) => boolean;

type ParsedAddress = ipaddr.IPv4 | ipaddr.IPv6;

// IPv4-mapped IPv6 (::ffff:1.2.3.4) is matched as the IPv4 address it carries.
const parseAddress = (address: string): ParsedAddress | undefined => {
    try {
        return ipaddr.process(address.replace(/^\[|\]$/g, "").replace(/%.*$/, ""));
    } catch {
        return undefined;
    }
};

const isWildcard = (entry: string): boolean => entry.includes("*");

const wildcardMatcher = (entry: string): AddressMatcher => {
    const pattern = entry.split(".");
    return (address) => {
        const parsed = parseAddress(address);
        if (parsed?.kind() !== "ipv4") {
            return false;
        }
        const octets = parsed.toString().split(".");
        for (let index = 0; index < pattern.length; index++) {
            const segment = pattern[index];
            if (segment === "*" && index === pattern.length - 1) {
                return true;
            }
            if (segment !== "*" && segment !== octets[index]) {
                return false;
            }
        }
        return pattern.length === octets.length;
    };
};

const rangeMatcher = (entry: string): AddressMatcher => {
    const [range, bits] = entry.includes("/")
        ? ipaddr.parseCIDR(entry)
        : ((parsed: ParsedAddress): [ParsedAddress, number] => [parsed, parsed.kind() === "ipv4" ? 32 : 128])(
              ipaddr.parse(entry),
          );
    // An IPv4-mapped range such as ::ffff:127.0.0.1 is compared as IPv4, like the addresses.
    const normalised: [ParsedAddress, number] =
        range.kind() === "ipv6" && (range as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96
            ? [(range as ipaddr.IPv6).toIPv4Address(), bits - 96]
            : [range, bits];
    return (address) => {
        const parsed = parseAddress(address);
        return parsed !== undefined && parsed.kind() === normalised[0].kind() && parsed.match(normalised);
    };
};

/** Returns why an entry is not a valid address, CIDR range or wildcard, or undefined when it is. */
export const describeInvalidEntry = (entry: string): string | undefined => {
    if (isWildcard(entry)) {
        const segments = entry.split(".");
        const valid =
            segments.length <= 4 &&
            segments.every((segment) => segment === "*" || (/^\d{1,3}$/.test(segment) && Number(segment) <= 255));
        return valid ? undefined : `"${entry}" is not an IPv4 wildcard such as 192.168.*`;
    }
    if (entry.includes("/")) {
        return ipaddr.isValidCIDR(entry) ? undefined : `"${entry}" is not a valid CIDR range`;
    }
    return ipaddr.isValid(entry) ? undefined : `"${entry}" is not a valid IP address`;
};

export const compileAddressList = (entries: readonly string[]): AddressMatcher => {
    const matchers = entries.map((entry) => (isWildcard(entry) ? wildcardMatcher(entry) : rangeMatcher(entry)));
    return (address) => matchers.some((matches) => matches(address));
};
