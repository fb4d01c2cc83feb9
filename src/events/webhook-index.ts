import { Webhook } from "../contracts";
import { compileMatcher, PayloadMatcher } from "./matcher";

export interface IndexedWebhook {
    webhook: Webhook;
    matches: PayloadMatcher;
}

/**
 * The enabled webhooks by event name, with their conditions compiled, kept in step with the
 * register so that the listener never touches the database to decide what matches.
 */
export class WebhookIndex {
    private readonly byEvent = new Map<string, Map<string, IndexedWebhook>>();
    private readonly eventOf = new Map<string, string>();

    public put(webhook: Webhook): void {
        this.remove(webhook.id);
        if (!webhook.enabled) {
            return;
        }
        let forEvent = this.byEvent.get(webhook.event);
        if (!forEvent) {
            forEvent = new Map();
            this.byEvent.set(webhook.event, forEvent);
        }
        forEvent.set(webhook.id, { webhook, matches: compileMatcher(webhook.conditions, webhook.match) });
        this.eventOf.set(webhook.id, webhook.event);
    }

    public remove(id: string): void {
        const event = this.eventOf.get(id);
        if (event === undefined) {
            return;
        }
        const forEvent = this.byEvent.get(event);
        forEvent?.delete(id);
        if (forEvent?.size === 0) {
            this.byEvent.delete(event);
        }
        this.eventOf.delete(id);
    }

    /** An enabled webhook by id, from memory. */
    public get(id: string): Webhook | undefined {
        const event = this.eventOf.get(id);
        return event === undefined ? undefined : this.byEvent.get(event)?.get(id)?.webhook;
    }

    public hasEvent(event: string): boolean {
        return this.byEvent.has(event);
    }

    public matching(event: string, payload: unknown): Webhook[] {
        const forEvent = this.byEvent.get(event);
        if (!forEvent) {
            return [];
        }
        const matched: Webhook[] = [];
        for (const { webhook, matches } of forEvent.values()) {
            if (matches(payload)) {
                matched.push(webhook);
            }
        }
        return matched;
    }

    public get size(): number {
        return this.eventOf.size;
    }
}
