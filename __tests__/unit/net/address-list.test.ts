import { compileAddressList, describeInvalidEntry } from "../../../src/net/address-list";

describe("address lists", () => {
    it.each<[string[], string, boolean]>([
        [["127.0.0.1"], "127.0.0.1", true],
        [["127.0.0.1"], "::ffff:127.0.0.1", true],
        [["127.0.0.1"], "127.0.0.2", false],
        [["::1"], "::1", true],
        [["::ffff:127.0.0.1"], "127.0.0.1", true],
        [["10.0.0.0/8"], "10.200.3.4", true],
        [["10.0.0.0/8"], "11.0.0.1", false],
        [["169.254.0.0/16"], "::ffff:169.254.169.254", true],
        [["fe80::/10"], "fe80::1%eth0", true],
        [["fe80::/10"], "2001:db8::1", false],
        [["192.168.*"], "192.168.10.20", true],
        [["192.168.*"], "192.169.0.1", false],
        [["192.*.1.1"], "192.55.1.1", true],
        [["192.*.1.1"], "192.55.1.2", false],
        [["*"], "8.8.8.8", true],
        [["*"], "::1", false],
        [[], "127.0.0.1", false],
        [["127.0.0.1"], "not an address", false],
    ])("%p holds %s: %p", (entries, address, expected) => {
        expect(compileAddressList(entries)(address)).toBe(expected);
    });

    it.each([
        ["10.0.0.0/8", undefined],
        ["192.168.*", undefined],
        ["::1", undefined],
        ["10.0.0.0/33", '"10.0.0.0/33" is not a valid CIDR range'],
        ["300.1.1.1", '"300.1.1.1" is not a valid IP address'],
        ["192.168.*.x", '"192.168.*.x" is not an IPv4 wildcard such as 192.168.*'],
        ["localhost", '"localhost" is not a valid IP address'],
    ])("judges the entry %s", (entry, problem) => {
        expect(describeInvalidEntry(entry)).toBe(problem);
    });
});
