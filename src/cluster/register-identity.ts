import { UnknownRegisterPolicy } from "../contracts";

/** What this relay knows when it reaches the shared register, and the operator's policy. */
export interface SharedRegisterMeeting {
    /** The shared register's identity now (POSTGRES_MIGRATIONS). */
    identity: string;
    /** The identity this relay's copy followed last; undefined before it followed one that had one. */
    followed: string | undefined;
    /** Whether this relay moved its own register into a shared one before. */
    movedBefore: boolean;
    ownWebhooks: number;
    sharedWebhooks: number;
    policy: UnknownRegisterPolicy;
    /** The database, for the message (never its password). */
    database: string;
}

export type SharedRegisterDecision =
    | { kind: "follow" }
    | { kind: "offer" }
    | { kind: "adopt" }
    | { kind: "refuse"; reason: string };

/**
 * Whether this relay may make its copy the shared register's state. A register dropped and created
 * again (or restored from another dump, or another database) starts empty or different: adopting it
 * would delete this relay's webhooks, and every relay's after it at their restart. A relay with
 * webhooks of its own follows it only as its policy says; one with none has nothing to lose.
 */
export const decideOnSharedRegister = (meeting: SharedRegisterMeeting): SharedRegisterDecision => {
    const { identity, followed, movedBefore, ownWebhooks, sharedWebhooks, policy, database } = meeting;
    if (followed === identity || ownWebhooks === 0) {
        return { kind: "follow" };
    }
    if (followed === undefined && (!movedBefore || sharedWebhooks > 0)) {
        // A first start with a shared register (its own webhooks move in next), or a relay of a
        // version that kept no identity, following a register that is not empty.
        return { kind: "follow" };
    }
    if (policy !== "refuse") {
        return { kind: policy };
    }
    const what =
        followed === undefined
            ? "is empty, although this relay moved its webhooks into it before"
            : `is not the one this relay followed (register ${followed}, now ${identity}): dropped and created again, restored from another dump, or another database`;
    return {
        kind: "refuse",
        reason:
            `the shared register (${database}) ${what}. This relay keeps serving its own copy of ${ownWebhooks} webhooks ` +
            `and writes nothing there. Restore the shared register, or set storage.postgres.unknownRegister to "offer" ` +
            `(this relay's copy goes into it) or "adopt" (this relay's copy is replaced by it)`,
    };
};
