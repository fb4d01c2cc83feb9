import { OriginLoad, publicWebhook, Webhook } from "../contracts";
import { kernelEventData } from "../delivery/announcer";
import { DeliveryEngine, EngineSetup } from "./delivery-engine";
import { EngineCallbacks, EngineHandle } from "./engine-handle";

/**
 * The delivery engine in the node's own thread: the same engine as in its thread, for embedders
 * and tests that hand it what cannot cross threads (a DNS resolver function).
 */
export class InlineEngine implements EngineHandle {
    private engine: DeliveryEngine | undefined;
    public readonly restarts = 0;

    public constructor(
        private readonly setup: EngineSetup,
        private readonly callbacks: EngineCallbacks,
    ) {}

    public get running(): boolean {
        return this.engine !== undefined;
    }

    public async start(): Promise<void> {
        const { callbacks } = this;
        const engine = new DeliveryEngine(this.setup, {
            // One attempt at a time: asking who hears it would cost the node's thread what the dispatch does.
            announce: ({ name, webhook, facts }) =>
                callbacks.dispatchEvent(name, kernelEventData(facts, publicWebhook(webhook))),
            disable: (webhookId, reason) => callbacks.disableWebhook(webhookId, reason),
            storageFailed: (part, error) => callbacks.health.failed(part, error),
            storageSucceeded: (part) => callbacks.health.succeeded(part),
            journalDamaged: (bytes) => callbacks.journalDamaged(bytes),
            log: callbacks.log,
        });
        engine.start();
        this.engine = engine;
    }

    public wake(webhookIds: readonly string[] = []): void {
        this.engine?.wake(webhookIds);
    }

    public resume(webhookId: string): void {
        this.engine?.resume(webhookId);
    }

    public webhookChanged(webhook: Webhook): void {
        this.engine?.putWebhook(webhook);
    }

    public webhookRemoved(id: string): void {
        this.engine?.removeWebhook(id);
    }

    public async origins(): Promise<OriginLoad[]> {
        return this.engine?.origins() ?? [];
    }

    public async metrics(): Promise<string> {
        return (await this.engine?.metrics.text()) ?? "";
    }

    public async stop(): Promise<void> {
        const engine = this.engine;
        this.engine = undefined;
        await engine?.stop();
    }
}
