import { lookup as dnsLookup, LookupAddress } from "dns";
import { isIP } from "net";
import { Agent, request } from "undici";

import { Deadlines } from "./deadlines";
import { AttemptResult, parseRetryAfter } from "./retry-policy";
import { TargetPolicy } from "./target-policy";
import { parseTarget } from "../net/target-url";

export const RESPONSE_EXCERPT_BYTES = 1024;
const LITERALS_KEPT = 1024;

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

class TargetRefusedError extends Error {
    public readonly code = "ETARGETREFUSED";
}

const systemResolver: Resolver = (hostname, callback) =>
    dnsLookup(hostname, { all: true }, (error, addresses) => callback(error, addresses ?? []));

const readExcerpt = async (body: AsyncIterable<Buffer>): Promise<string> => {
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const chunk of body) {
        if (length < RESPONSE_EXCERPT_BYTES) {
            chunks.push(chunk);
            length += chunk.length;
        }
    }
    return Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString("utf8");
};

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

/**
 * POSTs deliveries over pooled keep-alive connections. The target policy is checked against the
 * address each new connection resolves to, so a name cannot be pointed somewhere forbidden later.
 */
export class DeliverySender {
    private readonly agent: Agent;
    private readonly deadlines: Deadlines;
    /** The policy's answer for each literal address met lately: parsing one costs more than the rest of a check. */
    private readonly literalVerdicts = new Map<string, string | undefined>();

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
    public async send({ target, body, headers }: SendRequest): Promise<SendOutcome> {
        const parsed = parseTarget(target);
        if (!parsed.ok) {
            return { result: { kind: "refused", message: `the target ${parsed.reason}` }, responseExcerpt: null };
        }
        const url = parsed.url;
        const literal = url.hostname.replace(/^\[|\]$/g, "");
        // Literal addresses skip DNS, so the connection's lookup never sees them.
        const reason = this.literalVerdict(literal);
        if (reason) {
            return { result: { kind: "refused", message: reason }, responseExcerpt: null };
        }
        const deadline = this.deadlines.start();
        try {
            const response = await request(url, {
                method: "POST",
                dispatcher: this.agent,
                body,
                headers: { "content-type": "application/json", "user-agent": this.options.userAgent, ...headers },
                signal: deadline.signal,
            });
            const excerpt = await readExcerpt(response.body);
            const retryAfter = response.headers["retry-after"];
            return {
                result: {
                    kind: "response",
                    statusCode: response.statusCode,
                    retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now()),
                },
                responseExcerpt: excerpt,
            };
        } catch (error) {
            const refusal = findRefusal(error);
            if (refusal) {
                return { result: { kind: "refused", message: refusal.message }, responseExcerpt: null };
            }
            return { result: { kind: "network-error", message: describeError(error) }, responseExcerpt: null };
        } finally {
            deadline.release();
        }
    }

    public async close(): Promise<void> {
        this.deadlines.stop();
        await this.agent.close();
    }

    private literalVerdict(hostname: string): string | undefined {
        if (this.literalVerdicts.has(hostname)) {
            return this.literalVerdicts.get(hostname);
        }
        const verdict = isIP(hostname) ? this.options.policy(hostname) : undefined;
        if (this.literalVerdicts.size >= LITERALS_KEPT) {
            this.literalVerdicts.clear();
        }
        this.literalVerdicts.set(hostname, verdict);
        return verdict;
    }
}
