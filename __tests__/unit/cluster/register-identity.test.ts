import { decideOnSharedRegister, SharedRegisterMeeting } from "../../../src/cluster/register-identity";

const meeting = (changes: Partial<SharedRegisterMeeting>): SharedRegisterMeeting => ({
    identity: "new",
    followed: "old",
    movedBefore: true,
    ownWebhooks: 3,
    sharedWebhooks: 0,
    policy: "refuse",
    database: "PostgreSQL at db:5432/relays",
    ...changes,
});

describe("whether a relay's copy follows the shared register it meets", () => {
    it("follows the register it followed before, whatever it holds", () => {
        expect(decideOnSharedRegister(meeting({ identity: "old" }))).toEqual({ kind: "follow" });
    });

    it("follows any register when it holds no webhook of its own: nothing is lost", () => {
        expect(decideOnSharedRegister(meeting({ ownWebhooks: 0 }))).toEqual({ kind: "follow" });
    });

    it("follows at its first start with a shared register (its own webhooks move in next)", () => {
        expect(decideOnSharedRegister(meeting({ followed: undefined, movedBefore: false }))).toEqual({
            kind: "follow",
        });
    });

    it("follows a register that is not empty when it kept no identity before (a version without them)", () => {
        expect(decideOnSharedRegister(meeting({ followed: undefined, sharedWebhooks: 2 }))).toEqual({ kind: "follow" });
    });

    it("refuses another register, naming both identities, the database, its own copy and the remedies", () => {
        const decision = decideOnSharedRegister(meeting({ sharedWebhooks: 5 }));
        expect(decision.kind).toBe("refuse");
        expect(decision.kind === "refuse" && decision.reason).toBe(
            "the shared register (PostgreSQL at db:5432/relays) is not the one this relay followed (register old, now new): " +
                "dropped and created again, restored from another dump, or another database. This relay keeps serving its own " +
                'copy of 3 webhooks and writes nothing there. Restore the shared register, or set storage.postgres.unknownRegister to "offer" ' +
                "(this relay's copy goes into it) or \"adopt\" (this relay's copy is replaced by it)",
        );
    });

    it("refuses an empty register it moved its webhooks into before, when it kept no identity", () => {
        const decision = decideOnSharedRegister(meeting({ followed: undefined }));
        expect(decision.kind === "refuse" && decision.reason).toMatch(
            /is empty, although this relay moved its webhooks into it before\. This relay keeps serving its own copy of 3 webhooks/,
        );
    });

    it.each(["offer", "adopt"] as const)("does as the policy says (%s) where it would refuse", (policy) => {
        expect(decideOnSharedRegister(meeting({ policy }))).toEqual({ kind: policy });
        expect(decideOnSharedRegister(meeting({ policy, identity: "old" }))).toEqual({ kind: "follow" });
    });
});
