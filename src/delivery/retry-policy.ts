import { DeliveryStatus } from "../contracts";

/** What came back from one attempt. */
export type AttemptResult =
    | { kind: "response"; statusCode: number; retryAfterMs?: number }
    | { kind: "network-error"; message: string }
    | { kind: "refused"; message: string };

export interface RetryDecision {
    status: DeliveryStatus;
    nextAttemptAt: number | null;
    /** 410 Gone: the receiver asks never to be called again. */
    disableWebhook: boolean;
}

export interface RetryContext {
    /** 1 for the first attempt. */
    attemptNumber: number;
    scheduleSeconds: readonly number[];
    now: number;
    /** A number in [0, 1), as Math.random gives. */
    random: number;
}

export const JITTER_RATIO = 0.1;
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

const isRetryableStatus = (statusCode: number): boolean =>
    statusCode === 408 || statusCode === 429 || statusCode >= 500;

/** The delay before retry number `retry` (1-based), ±10 % so that failed receivers are not hit in step. */
export const retryDelayMs = (scheduleSeconds: readonly number[], retry: number, random: number): number => {
    const base = scheduleSeconds[retry - 1] * 1000;
    return Math.round(base * (1 + (random * 2 - 1) * JITTER_RATIO));
};

/** Reads a Retry-After header: delay-seconds or an HTTP date. */
export const parseRetryAfter = (header: string | undefined, now: number): number | undefined => {
    if (header === undefined || header.trim() === "") {
        return undefined;
    }
    const trimmed = header.trim();
    const milliseconds = /^\d+$/.test(trimmed) ? Number(trimmed) * 1000 : Date.parse(trimmed) - now;
    return Number.isFinite(milliseconds) ? Math.min(Math.max(0, milliseconds), MAX_RETRY_AFTER_MS) : undefined;
};

export const decideAfterAttempt = (result: AttemptResult, context: RetryContext): RetryDecision => {
    const final = (status: DeliveryStatus, disableWebhook = false): RetryDecision => ({
        status,
        nextAttemptAt: null,
        disableWebhook,
    });
    if (result.kind === "refused") {
        return final("failed");
    }
    if (result.kind === "response") {
        if (result.statusCode >= 200 && result.statusCode < 300) {
            return final("delivered");
        }
        if (result.statusCode === 410) {
            return final("failed", true);
        }
        if (!isRetryableStatus(result.statusCode)) {
            return final("failed");
        }
    }
    if (context.attemptNumber > context.scheduleSeconds.length) {
        return final("dead");
    }
    const scheduled = retryDelayMs(context.scheduleSeconds, context.attemptNumber, context.random);
    const requested = result.kind === "response" ? (result.retryAfterMs ?? 0) : 0;
    return { status: "pending", nextAttemptAt: context.now + Math.max(scheduled, requested), disableWebhook: false };
};
