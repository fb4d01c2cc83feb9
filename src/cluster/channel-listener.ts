import { Client, ClientConfig } from "pg";

const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;

/**
 * One connection of its own LISTENing to a channel, told of every notice on it; when the
 * connection breaks it connects again, after 1 s doubling up to 30 s. Notices are only hints: a
 * listener that was away must look for what it missed itself (`onListening` says when to).
 */
export class ChannelListener {
    private client: Client | undefined;
    private failures = 0;
    private timer: NodeJS.Timeout | undefined;
    private stopped = false;

    public constructor(
        private readonly config: ClientConfig,
        private readonly channel: string,
        private readonly onNotice: () => void,
        private readonly onListening: () => void = onNotice,
    ) {}

    public start(): void {
        void this.connect();
    }

    public async stop(): Promise<void> {
        this.stopped = true;
        clearTimeout(this.timer);
        const client = this.client;
        this.client = undefined;
        if (client) {
            await this.close(client);
        }
    }

    private async connect(): Promise<void> {
        if (this.stopped) {
            return;
        }
        const client = new Client(this.config);
        this.client = client;
        client.on("error", () => this.lost(client));
        client.on("end", () => this.lost(client));
        client.on("notification", (notice) => {
            if (notice.channel === this.channel) {
                this.onNotice();
            }
        });
        try {
            await client.connect();
            await client.query(`LISTEN ${this.channel}`);
        } catch {
            this.lost(client);
            return;
        }
        if (this.client === client) {
            this.failures = 0;
            this.onListening();
        }
    }

    private lost(client: Client): void {
        if (this.client !== client) {
            return;
        }
        this.client = undefined;
        void this.close(client);
        if (this.stopped) {
            return;
        }
        this.failures++;
        this.timer = setTimeout(
            () => void this.connect(),
            Math.min(RETRY_FIRST_MS * 2 ** (this.failures - 1), RETRY_MAX_MS),
        );
        this.timer.unref();
    }

    private async close(client: Client): Promise<void> {
        client.removeAllListeners();
        client.on("error", () => undefined);
        await client.end().catch(() => undefined);
    }
}
