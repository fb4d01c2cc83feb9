import { lookup as dnsLookup, LookupAddress } from "dns";
import { isIP } from "net";
import { Agent, Dispatcher } from "undici";

import { Deadlines } from "./deadlines";
import { boundedMemo } from "./bounded-memo";
import { AttemptResult, parseRetryAfter } from "./retry-policy";
import { TargetPolicy } from "./target-policy";
import { parseTarget } from "../net/target-url";

export const RESPONSE_EXCERPT_BYTES = 1024;
/**
 * An attempt that gets its connection with less than this share of its allowance left does not go
 * out: it could hardly be answered in time, and a receiver that took it would see it again on retry.
 */
const LEAST_SHARE_LEFT_TO_START = 0.1;

export interface SendRequest {
    target: string;
    body: string;
    headers: Record<string, string>;
}

export interface SendOutcome {
    result: AttemptResult;
    responseExcerpt: string | null;
}

export type Resolver = (hostname: string, callback: (error: Error | null, addresses: LookupAddress[]) => void) => void;

export interface SenderOptions {
    timeoutMs: number;
    connectionsPerTarget: number;
    policy: TargetPolicy;
    /** DNS resolution; injectable so that tests can make a name resolve anywhere. */
    resolve?: Resolver;
    userAgent: string;
}

/** A target read once: where to post, or why not. */
type PreparedTarget = { origin: string; path: string; refusal?: undefined } | { refusal: string };

class TargetRefusedError extends Error {
    public readonly code = "ETARGETREFUSED";
}

const systemResolver: Resolver = (hostname, callback) =>
    dnsLookup(hostname, { all: true }, (error, addresses) => callback(error, addresses ?? []));

const describeError = (error: unknown): string => {
    if (error instanceof Error) {
        const cause = (error as Error & { cause?: unknown }).cause;
        const inner = cause instanceof Error ? `: ${cause.message}` : "";
        return `${error.name === "Error" ? "" : `${error.name}: `}${error.message}${inner}`;
    }
    return String(error);
};

const findRefusal = (error: unknown): TargetRefusedError | undefined => {
    for (
        let current: unknown = error;
        current instanceof Error;
        current = (current as Error & { cause?: unknown }).cause
    ) {
        if (current instanceof TargetRefusedError) {
            return current;
        }
    }
    return undefined;
};

class AttemptTimeoutError extends Error {
    public constructor(timeoutMs: number) {
        super(`no complete answer within ${timeoutMs} ms`);
        this.name = "TimeoutError";
    }
}

const outcomeOfError = (error: unknown): SendOutcome => {
    const refusal = findRefusal(error);
    if (refusal) {
        return { result: { kind: "refused", message: refusal.message }, responseExcerpt: null };
    }
    return { result: { kind: "network-error", message: describeError(error) }, responseExcerpt: null };
};

/**
 * One POST, driven by undici's dispatcher callbacks: no response stream, promise or abort signal per
 * attempt (they cost as much as the rest of an attempt's HTTP work). Settles exactly once: with the
 * answer, the failure, or the deadline, whichever comes first.
 */
class PostAttempt implements Dispatcher.DispatchHandler {
    public release: () => void = () => undefined;
    private controller: Dispatcher.DispatchController | undefined;
    private statusCode = 0;
    private retryAfter: string | undefined;
    private readonly excerpt: Buffer[] = [];
    private excerptLength = 0;
    private settled = false;
    private readonly startedAt = performance.now();

    public constructor(
        private readonly settle: (outcome: SendOutcome) => void,
        private readonly timeoutMs: number,
    ) {}

    public onRequestStart(controller: Dispatcher.DispatchController): void {
        this.controller = controller;
        if (this.settled) {
            // Its time ran out while it waited for a connection: it never goes out.
            controller.abort(new AttemptTimeoutError(this.timeoutMs));
            return;
        }
        const left = this.timeoutMs - (performance.now() - this.startedAt);
        if (left < this.timeoutMs * LEAST_SHARE_LEFT_TO_START) {
            this.expire();
        }
    }

    public onResponseStart(
        _controller: Dispatcher.DispatchController,
        statusCode: number,
        headers: Record<string, string | string[] | undefined>,
    ): void {
        this.statusCode = statusCode;
        const retryAfter = headers["retry-after"];
        this.retryAfter = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
    }

    public onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
        this.excerpt.push(chunk);
        this.excerptLength += chunk.length;
        if (this.excerptLength >= RESPONSE_EXCERPT_BYTES) {
            // Nothing past the excerpt is kept, so nothing past it is read: a receiver answering
            // a gigabyte (or forever) costs one connection, not the transfer or the attempt's time.
            this.onResponseEnd();
            controller.abort(new Error("the answer's body is read no further than its excerpt"));
        }
    }

    public onResponseEnd(): void {
        this.finish({
            result: {
                kind: "response",
                statusCode: this.statusCode,
                retryAfterMs: parseRetryAfter(this.retryAfter, Date.now()),
            },
            responseExcerpt: Buffer.concat(this.excerpt).subarray(0, RESPONSE_EXCERPT_BYTES).toString("utf8"),
        });
    }

    public onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
        this.fail(error);
    }

    public fail(error: unknown): void {
        this.finish(outcomeOfError(error));
    }

    public expire(): void {
        const error = new AttemptTimeoutError(this.timeoutMs);
        this.finish(outcomeOfError(error));
        this.controller?.abort(error);
    }

    private finish(outcome: SendOutcome): void {
        if (this.settled) {
            return;
        }
        this.settled = true;
        this.release();
        this.settle(outcome);
    }
}

/**
 * POSTs deliveries over pooled keep-alive connections. The target policy is checked against the
 * address each new connection resolves to, so a name cannot be pointed somewhere forbidden later.
 */
export class DeliverySender {
    private readonly agent: Agent;
    private readonly deadlines: Deadlines;
    /**
     * Each target's origin and path, or why it cannot be posted to, for the targets met lately:
     * read at each attempt, the URL's parse and the literal address's check cost some 2 µs.
     */
    private readonly prepare = boundedMemo((target: string) => this.read(target), 1024);

    public constructor(private readonly options: SenderOptions) {
        this.deadlines = new Deadlines(options.timeoutMs);
        const resolve = options.resolve ?? systemResolver;
        this.agent = new Agent({
            connections: options.connectionsPerTarget,
            keepAliveTimeout: 10_000,
            headersTimeout: options.timeoutMs,
            bodyTimeout: options.timeoutMs,
            connect: {
                timeout: options.timeoutMs,
                lookup: (hostname, lookupOptions, callback) => {
                    const answer = (error: Error | null, addresses: LookupAddress[]) => {
                        if (error) {
                            return callback(error, []);
                        }
                        const allowed = addresses.filter(({ address }) => options.policy(address) === undefined);
                        if (allowed.length === 0) {
                            const reason = addresses.length > 0 ? options.policy(addresses[0].address) : "no address";
                            return callback(new TargetRefusedError(`${hostname} refused: ${reason}`), []);
                        }
                        if ((lookupOptions as { all?: boolean }).all) {
                            return callback(null, allowed);
                        }
                        return callback(null, allowed[0].address, allowed[0].family);
                    };
                    try {
                        resolve(hostname, answer);
                    } catch (error) {
                        answer(error instanceof Error ? error : new Error(String(error)), []);
                    }
                },
            },
        });
    }

    /** Never throws: every failure, an unusable target included, is an outcome to record. */
    public send({ target, body, headers }: SendRequest): Promise<SendOutcome> {
        const prepared = this.prepare(target);
        if (prepared.refusal !== undefined) {
            return Promise.resolve({ result: { kind: "refused", message: prepared.refusal }, responseExcerpt: null });
        }
        return new Promise<SendOutcome>((settle) => {
            const attempt = new PostAttempt(settle, this.options.timeoutMs);
            attempt.release = this.deadlines.start(() => attempt.expire());
            try {
                this.agent.dispatch(
                    {
                        origin: prepared.origin,
                        path: prepared.path,
                        method: "POST",
                        body,
                        headers: {
                            "content-type": "application/json",
                            "user-agent": this.options.userAgent,
                            ...headers,
                        },
                    },
                    attempt,
                );
            } catch (error) {
                attempt.fail(error);
            }
        });
    }

    public async close(): Promise<void> {
        this.deadlines.stop();
        await this.agent.close();
    }

    private read(target: string): PreparedTarget {
        const parsed = parseTarget(target);
        if (!parsed.ok) {
            return { refusal: `the target ${parsed.reason}` };
        }
        const { url } = parsed;
        // Literal addresses skip DNS, so the connection's lookup never sees them: they are checked here.
        const literal = url.hostname.replace(/^\[|\]$/g, "");
        const refusal = isIP(literal) ? this.options.policy(literal) : undefined;
        return refusal === undefined ? { origin: url.origin, path: `${url.pathname}${url.search}` } : { refusal };
    }
}
