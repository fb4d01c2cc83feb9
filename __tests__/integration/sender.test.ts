import { DeliverySender, RESPONSE_EXCERPT_BYTES, SendOutcome } from "../../src/delivery/sender";
import { eventually } from "../support/http";
import { answer, Receiver } from "../support/receiver";

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const senderWith = (
    timeoutMs: number,
    connectionsPerTarget = 4,
    policy = (_address: string) => undefined as string | undefined,
) => new DeliverySender({ timeoutMs, connectionsPerTarget, policy, userAgent: "sender-test" });

const post = (sender: DeliverySender, target: string, body = '{"n":1}'): Promise<SendOutcome> =>
    sender.send({ target, body, headers: { "webhook-id": "msg_1" } });

describe("the delivery sender, over real HTTP", () => {
    let receiver: Receiver;
    let sender: DeliverySender | undefined;

    afterEach(async () => {
        await sender?.close();
        sender = undefined;
        await receiver.stop();
    });

    it("posts the exact body and headers, and keeps the status and the first KiB of the answer", async () => {
        const long = "x".repeat(3 * RESPONSE_EXCERPT_BYTES);
        receiver = await new Receiver((_request, _index, response) => response.writeHead(201).end(long)).start();
        sender = senderWith(2_000);

        const outcome = await post(sender, `${receiver.url}?a=1`, '{"event":"x"}');

        expect(outcome.result).toEqual({ kind: "response", statusCode: 201, retryAfterMs: undefined });
        expect(outcome.responseExcerpt).toBe(long.slice(0, RESPONSE_EXCERPT_BYTES));
        expect(receiver.requests).toHaveLength(1);
        expect(receiver.requests[0].body).toBe('{"event":"x"}');
        expect(receiver.requests[0].headers).toMatchObject({
            "content-type": "application/json",
            "user-agent": "sender-test",
            "webhook-id": "msg_1",
        });
    });

    it("stops reading an answer once its excerpt is kept: an endless body is its status, not a timeout", async () => {
        let unfinished = 0;
        receiver = await new Receiver((_request, _index, response) => {
            response.writeHead(200, { "content-type": "text/plain" });
            const chunk = Buffer.alloc(64 * 1024, "y");
            const writeMore = (): void => {
                while (response.write(chunk)) {
                    // fills the socket until it pushes back
                }
            };
            response.on("drain", writeMore);
            response.on("close", () => (unfinished += response.writableFinished ? 0 : 1));
            writeMore();
        }).start();
        sender = senderWith(5_000);

        const outcome = await post(sender, receiver.url);

        expect(outcome.result).toEqual({ kind: "response", statusCode: 200, retryAfterMs: undefined });
        expect(outcome.responseExcerpt).toBe("y".repeat(RESPONSE_EXCERPT_BYTES));
        // The sender closed the connection under the endless answer.
        await eventually(async () => (unfinished === 1 ? true : undefined), { timeoutMs: 5_000, intervalMs: 10 });
    });

    it("reads a Retry-After in seconds", async () => {
        receiver = await new Receiver(answer(503, { "retry-after": "7" })).start();
        sender = senderWith(2_000);

        const outcome = await post(sender, receiver.url);

        expect(outcome.result).toMatchObject({ kind: "response", statusCode: 503 });
        const retryAfterMs = (outcome.result as { retryAfterMs?: number }).retryAfterMs ?? 0;
        expect(retryAfterMs).toBeGreaterThan(6_000);
        expect(retryAfterMs).toBeLessThanOrEqual(7_000);
    });

    it("ends a hanging attempt at its deadline, and one still waiting for a connection never goes out", async () => {
        // The first request hangs; any later one is answered.
        receiver = await new Receiver((_request, index, response) => {
            if (index > 0) {
                response.writeHead(200).end("ok");
            }
        }).start();
        // Long enough that a tenth of it (200 ms) outlasts any lateness of the 10 ms wait below.
        sender = senderWith(2_000, 1);

        const first = post(sender, receiver.url);
        // Its deadline comes 10 ms after the first's, when the first's connection ends.
        await wait(10);
        const outcomes = await Promise.all([first, post(sender, receiver.url)]);
        // A third, on the same only connection: the second, had it gone out late, would come first.
        const third = await post(sender, receiver.url);

        for (const { result } of outcomes) {
            expect(result).toMatchObject({ kind: "network-error", message: expect.stringMatching(/timeout/i) });
        }
        expect(third.result).toMatchObject({ kind: "response", statusCode: 200 });
        // The second waited behind the first on the only connection, and had almost no time left when it freed.
        expect(receiver.requests).toHaveLength(2);
    });

    it("sends an attempt that waited for a connection when enough of its time is left", async () => {
        receiver = await new Receiver(() => undefined).start();
        sender = senderWith(2_000, 1);

        const first = post(sender, receiver.url);
        await wait(1_000);
        const outcomes = await Promise.all([first, post(sender, receiver.url)]);

        for (const { result } of outcomes) {
            expect(result).toMatchObject({ kind: "network-error", message: expect.stringMatching(/timeout/i) });
        }
        // The first's connection ended at its deadline; the second still had half its time, and went out.
        expect(receiver.requests).toHaveLength(2);
    });

    it("reports a connection reset as a network error", async () => {
        receiver = await new Receiver((_request, _index, response) => response.socket?.destroy()).start();
        sender = senderWith(2_000);

        const outcome = await post(sender, receiver.url);

        expect(outcome.result.kind).toBe("network-error");
    });

    it("refuses a literal address the policy forbids without connecting", async () => {
        receiver = await new Receiver().start();
        sender = senderWith(2_000, 4, (address) => (address === "127.0.0.1" ? "127.0.0.1 is denied" : undefined));

        const outcome = await post(sender, receiver.url);

        expect(outcome.result).toEqual({ kind: "refused", message: "127.0.0.1 is denied" });
        expect(receiver.requests).toHaveLength(0);
    });
});
