import { compileTargetPolicy, DEFAULT_DENY_TARGETS } from "../../../src/delivery/target-policy";

const policy = (options: Partial<Parameters<typeof compileTargetPolicy>[0]> = {}) =>
    compileTargetPolicy({ allowTargets: [], denyTargets: [], replaceDefaultDenyTargets: false, ...options });

describe("the targets a delivery may connect to", () => {
    it.each([
        ["169.254.169.254", "AWS, GCP, Azure over IPv4"],
        ["fd00:ec2::254", "AWS over IPv6"],
        ["100.100.100.200", "Alibaba Cloud"],
        ["192.0.0.192", "Oracle Cloud"],
    ])("refuses the cloud metadata service at %s (%s) by default", (address) => {
        expect(policy()(address)).toBe(`${address} is in delivery.denyTargets`);
    });

    it.each([
        ["64:ff9b::a9fe:a9fe", "NAT64"],
        ["64:ff9b::169.254.169.254", "NAT64, dotted"],
        ["64:ff9b:1::a9fe:a9fe", "local-use NAT64"],
        ["2002:a9fe:a9fe::", "6to4"],
        ["2002:a9fe:a9fe:1::1", "6to4, a host behind it"],
        ["::a9fe:a9fe", "IPv4-compatible"],
        ["::ffff:169.254.169.254", "IPv4-mapped"],
        ["2001:0:4136:e378:8000:63bf:5601:5601", "Teredo, its client stored inverted"],
        ["[64:ff9b::a9fe:a9fe]", "NAT64 in brackets"],
    ])("refuses 169.254.169.254 carried inside the IPv6 address %s (%s)", (address) => {
        expect(policy()(address)).toMatch(/is in delivery\.denyTargets$/);
    });

    it.each(["127.0.0.1", "10.1.2.3", "::1", "2001:db8::1", "64:ff9b::808:808", "2002:808:808::", "93.184.216.34"])(
        "lets %s through by default",
        (address) => {
            expect(policy()(address)).toBeUndefined();
        },
    );

    it("adds delivery.denyTargets to the built-in list, and embedded forms of what it names are refused too", () => {
        const check = policy({ denyTargets: ["10.0.0.0/8"] });
        expect(check("10.1.2.3")).toBe("10.1.2.3 is in delivery.denyTargets");
        expect(check("64:ff9b::a01:203")).toBe("64:ff9b::a01:203 is in delivery.denyTargets");
        expect(check("169.254.169.254")).toBe("169.254.169.254 is in delivery.denyTargets");
    });

    it("replaces the built-in list only when asked to", () => {
        const check = policy({ denyTargets: ["10.0.0.0/8"], replaceDefaultDenyTargets: true });
        expect(check("169.254.169.254")).toBeUndefined();
        expect(check("10.1.2.3")).toBe("10.1.2.3 is in delivery.denyTargets");
    });

    it("checks an allow list after the deny list, against the address as given", () => {
        const check = policy({ allowTargets: ["127.0.0.0/8", "64:ff9b::/96"] });
        expect(check("127.0.0.1")).toBeUndefined();
        expect(check("64:ff9b::a9fe:a9fe")).toMatch(/is in delivery\.denyTargets$/);
        expect(check("64:ff9b::7f00:1")).toBeUndefined();
        expect(check("10.0.0.1")).toBe("10.0.0.1 is not in delivery.allowTargets");
    });

    it("keeps the built-in list free of duplicates and valid", () => {
        expect(new Set(DEFAULT_DENY_TARGETS).size).toBe(DEFAULT_DENY_TARGETS.length);
        expect(() => policy()("::")).not.toThrow();
    });
});
