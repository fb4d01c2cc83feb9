import { createServer, IncomingHttpHeaders } from "http";
import { Webhook } from "standardwebhooks";

/**
 * `npm run receiver -- --port P --token T [--token T2 …]`: a webhook receiver on 127.0.0.1 that
 * answers 200 and prints each delivery: its event, webhook-id, the how-many-th time this id
 * arrived, and whether its Standard Webhooks signature verifies with one of the given tokens.
 */
export const RECEIVER_READY = "receiving deliveries at";

const USAGE = "usage: npm run receiver -- --port <port, default 4005> --token <the webhook's token> [--token …]";

class UsageError extends Error {}

interface ReceiverArgs {
    port: number;
    tokens: string[];
}

const parseArgs = (args: string[]): ReceiverArgs => {
    const parsed: ReceiverArgs = { port: 4005, tokens: [] };
    for (let index = 0; index < args.length; index += 2) {
        const [flag, value] = [args[index], args[index + 1]];
        if (value === undefined) {
            throw new UsageError(`${flag} needs a value`);
        }
        if (flag === "--port") {
            parsed.port = Number(value);
            if (!Number.isInteger(parsed.port) || parsed.port < 1 || parsed.port > 65535) {
                throw new UsageError(`--port ${value} is not a port from 1 to 65535`);
            }
        } else if (flag === "--token") {
            if (!/^[0-9a-f]{64}$/i.test(value)) {
                throw new UsageError("--token is the 64 hex characters returned when the webhook was created");
            }
            parsed.tokens.push(value);
        } else {
            throw new UsageError(`unknown option ${flag}`);
        }
    }
    return parsed;
};

const verifies = (tokens: string[], body: string, headers: IncomingHttpHeaders): boolean =>
    tokens.some((token) => {
        try {
            new Webhook(Buffer.from(token, "hex"), { format: "raw" }).verify(body, headers as Record<string, string>);
            return true;
        } catch {
            return false;
        }
    });

const describe = (body: string): string => {
    try {
        const parsed = JSON.parse(body) as { event?: unknown };
        return typeof parsed.event === "string" ? parsed.event : "(no event in the body)";
    } catch {
        return "(a body that is not JSON)";
    }
};

const main = (): void => {
    const { port, tokens } = parseArgs(process.argv.slice(2));
    const arrivals = new Map<string, number>();
    const server = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on("data", (chunk: Buffer) => chunks.push(chunk));
        request.on("end", () => {
            const body = Buffer.concat(chunks).toString();
            const id = String(request.headers["webhook-id"] ?? "(no webhook-id)");
            const attempt = (arrivals.get(id) ?? 0) + 1;
            arrivals.set(id, attempt);
            const signature =
                tokens.length === 0
                    ? "signature not checked (no --token)"
                    : verifies(tokens, body, request.headers)
                      ? "signature verified"
                      : "signature NOT verified";
            const time = new Date().toISOString().slice(11, 23);
            console.log(`[${time}] ${describe(body)}  webhook-id ${id}  attempt ${attempt}  ${signature}`);
            if (process.env.RECEIVER_PRINT_BODY === "1") {
                console.log(body);
            }
            response.writeHead(200, { "content-type": "text/plain" }).end("ok");
        });
    });
    server.on("error", (error) => {
        console.error(`the receiver could not listen on 127.0.0.1:${port}: ${error.message}`);
        process.exit(1);
    });
    server.listen(port, "127.0.0.1", () => {
        console.log(`${RECEIVER_READY} http://127.0.0.1:${port}/ (Ctrl-C stops)`);
    });
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
        process.on(signal, () => {
            server.closeAllConnections();
            server.close(() => process.exit(0));
        });
    }
};

try {
    main();
} catch (error) {
    console.error(error instanceof UsageError ? `${error.message}\n${USAGE}` : String(error));
    process.exit(2);
}
