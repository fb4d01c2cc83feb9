import { parseTarget } from "../../../src/net/target-url";

describe("reading a delivery target", () => {
    it.each([
        ["http://127.0.0.1:4004/hook"],
        ["https://receiver.example/hook?x=1"],
        ["http://[::1]:8080/"],
        ["http://127.0.0.1:65535/"],
    ])("accepts %s", (target) => {
        expect(parseTarget(target).ok).toBe(true);
    });

    it.each([
        ["http://127.0.0.1:99999/", /not a valid URL/],
        ["http://256.256.256.256/", /not a valid URL/],
        ["http://127.0.0.1:0/", /port 0/],
        ["http://user:pw@127.0.0.1/", /credentials/],
        ["http://user@127.0.0.1/", /credentials/],
        ["ftp://127.0.0.1/", /http or https/],
        ["not a url", /not a valid URL/],
    ])("refuses %s", (target, reason) => {
        const parsed = parseTarget(target);

        expect(parsed.ok ? "" : parsed.reason).toMatch(reason);
    });
});
