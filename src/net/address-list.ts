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

const fromBits = (high: number, low: number): ipaddr.IPv4 =>
    new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

const NAT64 = ipaddr.parseCIDR("64:ff9b::/96");
const NAT64_LOCAL = ipaddr.parseCIDR("64:ff9b:1::/48");
const SIX_TO_FOUR = ipaddr.parseCIDR("2002::/16");
const TEREDO = ipaddr.parseCIDR("2001::/32");
const COMPATIBLE = ipaddr.parseCIDR("::/96");

/**
 * The IPv4 address an IPv6 address carries and reaches through a translator or tunnel: NAT64
 * (64:ff9b::/96 and the local-use 64:ff9b:1::/48), 6to4 (2002::/16), Teredo's client (2001::/32,
 * stored inverted) and the deprecated IPv4-compatible form (::a.b.c.d). IPv4-mapped addresses are
 * already compared as IPv4 (parseAddress).
 */
export const embeddedIPv4 = (address: string): string | undefined => {
    const parsed = parseAddress(address);
    if (parsed?.kind() !== "ipv6") {
        return undefined;
    }
    const ipv6 = parsed as ipaddr.IPv6;
    const parts = ipv6.parts;
    if (ipv6.match(NAT64) || ipv6.match(NAT64_LOCAL)) {
        return fromBits(parts[6], parts[7]).toString();
    }
    if (ipv6.match(SIX_TO_FOUR)) {
        return fromBits(parts[1], parts[2]).toString();
    }
    if (ipv6.match(TEREDO)) {
        return fromBits(~parts[6] & 0xffff, ~parts[7] & 0xffff).toString();
    }
    // :: and ::1 are the unspecified and loopback addresses, not IPv4 ones.
    if (ipv6.match(COMPATIBLE) && (parts[6] !== 0 || parts[7] > 1)) {
        return fromBits(parts[6], parts[7]).toString();
    }
    return undefined;
};

/**
 * `embedded`: an IPv6 address also matches when the IPv4 address it carries does (see
 * embeddedIPv4): for deny lists, where 64:ff9b::a9fe:a9fe reaches 169.254.169.254.
 */
export const compileAddressList = (entries: readonly string[], { embedded = false } = {}): AddressMatcher => {
    const matchers = entries.map((entry) => (isWildcard(entry) ? wildcardMatcher(entry) : rangeMatcher(entry)));
    const matches = (address: string): boolean => matchers.some((matcher) => matcher(address));
    if (!embedded) {
        return matches;
    }
    return (address) => {
        if (matches(address)) {
            return true;
        }
        const carried = embeddedIPv4(address);
        return carried !== undefined && matches(carried);
    };
};
