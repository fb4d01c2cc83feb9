/** Every event name a webhook may listen for: the interface's catalogue and the 3.9.1 kernel's own. */
export interface CatalogueEntry {
    name: string;
    description: string;
    /** Whether an ARK Core 3.9.1 node dispatches the event at all. */
    emitted: boolean;
    /** Where this entry departs from the interface's table, and why. */
    note?: string;
}

/** Events a 3.9.1 node dispatches that no webhook may listen for. */
export interface ExcludedEvent {
    name: string;
    reason: string;
}

const RECORDED_ON_391 =
    "The interface's table marks it as not implemented, but a 3.9.1 node dispatches it (recorded on a real node), so it is listed as emitted.";

export const EVENT_CATALOGUE: readonly CatalogueEntry[] = [
    { name: "kernel.booted", description: "The kernel has booted", emitted: true },
    { name: "kernel.booting", description: "The kernel is booting", emitted: true },
    { name: "kernel.bootstrapper.bootstrapped", description: "The bootstrapper has bootstrapped", emitted: true },
    { name: "kernel.bootstrapper.bootstrapping", description: "The bootstrapper is bootstrapping", emitted: true },
    { name: "kernel.serviceProvider.booted", description: "The kernel service provider has booted", emitted: true },
    {
        name: "kernel.serviceProvider.disposed",
        description: "The kernel service provider has been disposed",
        emitted: true,
    },
    {
        name: "kernel.serviceProvider.registered",
        description: "The kernel service provider has been registered",
        emitted: true,
    },
    { name: "cache.flushed", description: "The cache has been flushed", emitted: true },
    { name: "cache.forgotten", description: "The cache has been forgotten", emitted: true },
    { name: "cache.hit", description: "The cache has been hit", emitted: true },
    { name: "cache.missed", description: "The cache has been missed", emitted: true },
    { name: "cache.written", description: "The cache has been written to", emitted: true },
    { name: "crypto.milestone.changed", description: "The crypto milestone has changed", emitted: true },
    { name: "blockchain.synced", description: "The blockchain has synced", emitted: true },
    { name: "block.applied", description: "A block is saved", emitted: true },
    { name: "block.disregarded", description: "A block is disregarded", emitted: true },
    { name: "block.forged", description: "A block is forged", emitted: true },
    { name: "block.received", description: "A block is incoming", emitted: true },
    {
        name: "block.reverted",
        description: "A block is removed from the database (for example on a rollback)",
        emitted: true,
    },
    { name: "database.preConnect", description: "During the database pre-connection state", emitted: true },
    { name: "database.postConnect", description: "During the database post-connection state", emitted: true },
    { name: "database.preDisconnect", description: "During the database pre-disconnection state", emitted: true },
    { name: "database.postDisconnect", description: "During the database post-disconnection state", emitted: true },
    { name: "delegate.productivityChanged", description: "After a delegate's productivity has changed", emitted: true },
    { name: "delegate.registered", description: "A new delegate is registered", emitted: true },
    { name: "delegate.resigned", description: "A delegate resigns", emitted: true },
    { name: "wallet.vote", description: "A wallet votes", emitted: true },
    { name: "forger.failed", description: "The forger module fails to start", emitted: true },
    { name: "forger.missing", description: "It is detected that the forger module is not running", emitted: true },
    {
        name: "forger.started",
        description: "The forger module forges a new block",
        emitted: true,
        note: `${RECORDED_ON_391} It fires once, when the forger starts, with its active delegates' public keys, and only in the process that runs the forger.`,
    },
    { name: "peer.added", description: "A peer is added", emitted: true },
    { name: "peer.disconnect", description: "A peer will disconnect", emitted: true },
    { name: "peer.disconnected", description: "A peer has disconnected", emitted: true },
    { name: "peer.disconnecting", description: "A peer is disconnecting", emitted: true },
    { name: "peer.removed", description: "A peer is removed", emitted: true },
    { name: "round.applied", description: "A new round has been applied", emitted: true },
    { name: "round.created", description: "A new round is created and saved to the database", emitted: true },
    { name: "round.missed", description: "A round has been missed", emitted: true },
    { name: "state.builder.finished", description: "The state builder has finished building", emitted: true },
    {
        name: "state.started",
        description: "The state builder has started building",
        emitted: true,
        note: `${RECORDED_ON_391} It fires once, after the state is built, with \`true\`.`,
    },
    { name: "state.starting", description: "The state builder is starting to build", emitted: true },
    { name: "transaction.pool.added", description: "Transactions are added to the pool", emitted: true },
    { name: "transaction.applied", description: "A transaction is saved", emitted: true },
    { name: "transaction.expired", description: "An unconfirmed transaction expires", emitted: true },
    { name: "transaction.forged", description: "A transaction is forged by a delegate", emitted: true },
    {
        name: "transaction.pool.rejected",
        description: "Transactions are rejected and not added to the pool",
        emitted: true,
    },
    {
        name: "transaction.pool.removed",
        description: "A transaction is removed from the pool by its ID",
        emitted: true,
    },
    { name: "transaction.reverted", description: "A transaction is removed from the database", emitted: true },
    { name: "schedule.blockJob.finished", description: "A block job has finished running", emitted: true },
    { name: "schedule.cronJob.finished", description: "A cron job has finished running", emitted: true },
    { name: "queue.finished", description: "The queue has finished", emitted: true },
    { name: "queue.failed", description: "The queue has failed", emitted: true },
    { name: "wallet.unvote", description: "A wallet removes its vote", emitted: true },
];

export const EXCLUDED_EVENTS: readonly ExcludedEvent[] = [
    {
        name: "wallet.property.set",
        reason: "the node dispatches it for every attribute of every wallet it touches (545 times in a seven-block run, most while it builds its state at boot), with the node's internal wallet objects as payload; it is not in the interface's catalogue. Listen for transaction.applied, wallet.vote or delegate.registered instead.",
    },
    {
        name: "webhooks.broadcasted",
        reason: "this plugin's own event, announced to the kernel after each attempt; never matched, so that no webhook loops.",
    },
    {
        name: "webhooks.failed",
        reason: "this plugin's own event, announced to the kernel after each failed attempt; never matched, so that no webhook loops.",
    },
];

export const EVENT_NAMES: ReadonlySet<string> = new Set(EVENT_CATALOGUE.map((entry) => entry.name));

/** The plugin's own events: announced to the kernel, never matched, so that no webhook loops. */
export const OWN_EVENT_PREFIX = "webhooks.";
/** Announced to the kernel after each attempt, as ARK's plugin does. */
export const WEBHOOK_EVENTS = { broadcasted: "webhooks.broadcasted", failed: "webhooks.failed" } as const;
export const PING_EVENT = "webhook.ping";
