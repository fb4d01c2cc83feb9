import { createServer, IncomingHttpHeaders, Server, ServerResponse } from "http";
import { AddressInfo } from "net";

export interface ReceivedRequest {
    url: string;
    headers: IncomingHttpHeaders;
    body: string;
    receivedAt: number;
}

/** Decides how the receiver answers its n-th request (0-based). */
export type Behaviour = (request: ReceivedRequest, index: number, response: ServerResponse) => void;

export const answer =
    (status: number, headers: Record<string, string> = {}): Behaviour =>
    (_request, _index, response) => {
        response.writeHead(status, headers).end("ok");
    };

/** A real HTTP receiver on 127.0.0.1 that records every request. */
export class Receiver {
    public readonly requests: ReceivedRequest[] = [];
    private server: Server | undefined;
    private sockets = new Set<import("net").Socket>();

    public constructor(public behaviour: Behaviour = answer(200)) {}

    public async start(port = 0): Promise<this> {
        this.server = createServer((request, response) => {
            const chunks: Buffer[] = [];
            request.on("data", (chunk: Buffer) => chunks.push(chunk));
            request.on("end", () => {
                const received = {
                    url: request.url ?? "",
                    headers: request.headers,
                    body: Buffer.concat(chunks).toString(),
                    receivedAt: Date.now(),
                };
                this.requests.push(received);
                this.behaviour(received, this.requests.length - 1, response);
            });
        });
        this.server.on("connection", (socket) => {
            this.sockets.add(socket);
            socket.on("close", () => this.sockets.delete(socket));
        });
        await new Promise<void>((resolve) => this.server?.listen(port, "127.0.0.1", resolve));
        return this;
    }

    public get port(): number {
        return (this.server?.address() as AddressInfo).port;
    }

    public get url(): string {
        return `http://127.0.0.1:${this.port}/hook`;
    }

    public async stop(): Promise<void> {
        this.sockets.forEach((socket) => socket.destroy());
        await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
        this.server = undefined;
    }
}
