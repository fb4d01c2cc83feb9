import { WalletCriteria, WalletResource } from "@arkecosystem/core-api/dist/resources-new";
import { Contracts } from "@arkecosystem/core-kernel";
import { Worker } from "worker_threads";

import { PendingAnswers } from "../worker/pending-answers";
import { spawnWorker } from "../worker/spawn";
import { withThreadHeap } from "../worker/thread-heap";
import { RepositoryOrder } from "./repository-order";
import { forOfSliced, SLICE_MS, stepSome, yieldPastTimers, yieldToEventLoop } from "./sliced-sort";
import { ListedWallet, toResource, WalletJsonCache } from "./wallet-json";
import {
    FromWallets,
    KEEP_POSITION,
    ToWallets,
    WalletAnswer,
    WalletQuestion,
    WalletThreadState,
} from "./wallet-messages";
import { receiveWallet, toTransferable, TransferredWallet, transferWallet } from "./wallet-transfer";

export type WalletSource = Pick<
    Contracts.State.WalletRepository,
    "allByAddress" | "hasByAddress" | "findByAddress" | "getIndex"
>;

/**
 * The repository's wallets by address, read in place: core-state 3.9.1's address index keeps them
 * in a Map (`walletByKey`); a copy of a million wallets into an array would hold the event loop.
 */
const walletsByAddress = (repository: WalletSource): Map<string, Contracts.State.Wallet> | undefined => {
    const byKey: unknown = Reflect.get(repository.getIndex(Contracts.State.WalletIndexes.Addresses), "walletByKey");
    return byKey instanceof Map ? (byKey as Map<string, Contracts.State.Wallet>) : undefined;
};

const repositorySize = (repository: WalletSource): number =>
    walletsByAddress(repository)?.size ?? repository.allByAddress().length;

/** The repository's wallets in its order (core-api's tie-break). */
const walletsOf = (repository: WalletSource): Iterable<Contracts.State.Wallet> =>
    walletsByAddress(repository)?.values() ?? repository.allByAddress();

/**
 * A copy of plain objects and arrays (values such as BigNumber are immutable and shared): the
 * wallet's own attribute object changes in place, and an answer must not change under it.
 */
const snapshot = (value: unknown): unknown => {
    if (Array.isArray(value)) {
        return value.map(snapshot);
    }
    if (
        value !== null &&
        typeof value === "object" &&
        [Object.prototype, null].includes(Object.getPrototypeOf(value))
    ) {
        const copy: Record<string, unknown> = {};
        for (const key of Object.keys(value)) {
            copy[key] = snapshot((value as Record<string, unknown>)[key]);
        }
        return copy;
    }
    return value;
};

/** The wallet's resource as it is now, kept as it is whatever the wallet does after. */
const copiedResource = (wallet: Contracts.State.Wallet): WalletResource =>
    toResource(wallet, snapshot(wallet.getAttributes()) as object);

/**
 * The page's meta, one object for every page. core-api's pagination spreads it into the envelope;
 * with a new object each page, what that function built outlived the node's young collections:
 * V8's sampling heap profiler put 18 of the 30 MB promoted to the old generation by 10,000
 * listings there (100,000 wallets), and with this one object none. Promoted garbage is what
 * brings a major collection of the node's heap, which at a million wallets is some 0.9 GB.
 */
const EXACT_COUNT: Readonly<{ totalCountIsEstimate: false }> = Object.freeze({ totalCountIsEstimate: false });

// Wallets sent to the thread in one message while the whole state is sent: posting copies them
// on the node's thread (some 2.3 µs a wallet), so a message is kept small enough to fit a slice.
const SYNC_BATCH = 256;
// The wallet thread's heap (see worker/thread-heap.ts): a young generation never below V8's
// largest, and no memory reducer, its heap being the lists' live data.
const WALLET_THREAD_HEAP = { youngGenerationFloorMb: 16, memoryReducer: false };
// What the thread holds per wallet once its lists are built, rounded up: 726 B at a million
// wallets in the benchmark, and the numbers of a few lists beside (some 30 B a wallet each). Its
// old generation is sized for that before its first full collection (see worker/thread-heap.ts).
const THREAD_BYTES_PER_WALLET = 1024;
// Addresses asked about in one message when the repository holds wallets the thread may not.
const UNKNOWN_BATCH = 10_000;
// Wallets kept written as JSON: a hundred pages of the largest size, a few megabytes.
const SERIALIZED_WALLETS = 10_000;

export interface WalletCatalogueOptions {
    /** Told when the wallet thread stops unexpectedly; it is started again by the next listing. */
    onThreadError?: (message: string) => void;
    /** How far below the node's threads the wallet thread runs (see worker/spawn.ts). */
    threadNiceness?: number;
}

/**
 * The node's wallets as core-api lists them, kept current as they change instead of rebuilt, and
 * kept off the node's thread. Every mutation of a core-state wallet dispatches
 * `wallet.property.set` with the wallet, synchronously: `changed()` notes its address. Before a
 * listing is asked of the wallet thread (wallet-thread.ts, which keeps the sorted lists), the
 * wallets noted since the last one are sent to it, as they are now, in slices of a few
 * milliseconds. The thread takes messages in order, so its answer holds every change made before
 * the listing was asked: the state when the request was handled, never an older one.
 *
 * What stays on the node's thread is small and bounded: noting addresses, copying changed
 * wallets (a few hundred per block), and, once per start, sending every wallet in slices. The
 * sorted lists, their entries and the garbage of sorting a million wallets live in the thread's
 * heap, so they add nothing to the node's garbage collections.
 */
export class WalletCatalogue {
    private worker: Worker | undefined;
    private readonly changedAddresses = new Set<string>();
    private readonly serialized = new WalletJsonCache(SERIALIZED_WALLETS);
    /** Wallet changes noted since start: a page is read from the node's wallets only if none came while it was asked. */
    private changes = 0;
    /** The thread holds every wallet (changes aside): only changes need sending. */
    private synced = false;
    private sizeUnsure = true;
    /** Blocks seen: a size compared before the last of them says nothing of what it created. */
    private blocks = 0;
    private catchingUp: Promise<void> | undefined;
    private refreshScheduled = false;
    private disposed = false;
    private lastQuestion = 0;
    /** A page was answered in this turn of the loop (see takeTurn). */
    private pageThisTurn = false;
    private readonly questions = new PendingAnswers<{
        resolve: (answer: WalletAnswer) => void;
        reject: (error: Error) => void;
    }>();

    /** Each wallet's place in the repository's order, where the index can be followed. */
    private readonly order: RepositoryOrder | undefined;

    public constructor(
        private readonly repository: WalletSource,
        private readonly options: WalletCatalogueOptions = {},
    ) {
        this.order = RepositoryOrder.follow(repository, (address) => this.changed(address));
    }

    /** The wallet thread, while it runs (diagnostics, and tests that end it). */
    public get thread(): Worker | undefined {
        return this.worker;
    }

    /** A wallet of the node's state changed. O(1): called for every property the node sets. */
    public changed(address: string): void {
        this.changedAddresses.add(address);
        this.serialized.forget(address);
        this.changes++;
    }

    /**
     * A block was applied or reverted. It may have created wallets no wallet event told of: the
     * repository's size is compared with the thread's. And the changes are sent now, and the lists
     * kept brought up to date, so that the requests that follow the block find them current.
     */
    public invalidate(): void {
        this.sizeUnsure = true;
        this.blocks++;
        if (this.synced && !this.refreshScheduled && !this.disposed) {
            this.refreshScheduled = true;
            setImmediate(() => {
                this.refreshScheduled = false;
                this.catchUp().then(
                    () => this.post({ kind: "refresh" }),
                    () => undefined, // the next listing meets the same failure and answers it
                );
            });
        }
    }

    /** Stops following the node's state and ends the wallet thread (the plugin is stopping). */
    public async dispose(): Promise<void> {
        this.disposed = true;
        this.order?.stop();
        const worker = this.worker;
        this.worker = undefined;
        this.failQuestions("the wallet listings are stopping");
        this.serialized.clear();
        await worker?.terminate();
    }

    /** A page of the listing, each wallet's resource a copy as it was when the page was read. */
    public page(
        pagination: Contracts.Search.Pagination,
        sorting: Contracts.Search.Sorting,
        ...criterias: WalletCriteria[]
    ): Promise<Contracts.Search.ResultsPage<WalletResource>> {
        return this.pageOf(pagination, sorting, criterias, copiedResource);
    }

    /**
     * The same page, its wallets written as JSON where they were read in place (see
     * wallet-json.ts): what the listing routes answer with.
     */
    public serializedPage(
        pagination: Contracts.Search.Pagination,
        sorting: Contracts.Search.Sorting,
        ...criterias: WalletCriteria[]
    ): Promise<Contracts.Search.ResultsPage<ListedWallet>> {
        return this.pageOf<ListedWallet>(pagination, sorting, criterias, (wallet, address) =>
            this.serialized.serialized(address, wallet),
        );
    }

    private async pageOf<Listed>(
        pagination: Contracts.Search.Pagination,
        sorting: Contracts.Search.Sorting,
        criterias: WalletCriteria[],
        listed: (wallet: Contracts.State.Wallet, address: string) => Listed,
    ): Promise<Contracts.Search.ResultsPage<Listed | WalletResource>> {
        // Criteria parsed by core-api's schemas hold BigNumbers.
        const transferred = criterias.map((criteria) => toTransferable(criteria) as WalletCriteria);
        let withWallets = false;
        for (;;) {
            do {
                await this.catchUp();
            } while (!this.caughtUp()); // a change noted in between is sent before the question
            const changesBefore = this.changes;
            // After a block the sizes are compared with the question, not in a round trip before it.
            const sizeAsked = this.sizeUnsure;
            const blocksBefore = this.blocks;
            const {
                page,
                error,
                size: held,
            } = await this.ask({
                kind: "page",
                pagination,
                sorting,
                criterias: transferred,
                withWallets,
                ...(sizeAsked ? { expectedSize: repositorySize(this.repository) } : {}),
            });
            if (held !== undefined && !page && error === undefined) {
                await this.reconcileSize(held);
                continue;
            }
            if (sizeAsked && this.blocks === blocksBefore) {
                this.sizeUnsure = false;
            }
            if (error !== undefined || !page) {
                // core-api throws the same (values it cannot compare), and answers it the same way.
                throw new Error(error ?? "the wallet thread gave no page");
            }
            let results: Array<Listed | WalletResource>;
            if (this.changes === changesBefore) {
                // No wallet changed while the page was asked: the wallets as they are now are the
                // ones the page was sorted by. Read in place, they add no copies to the node's heap.
                // From the address index's own map where it can be read: findByAddress looks each one
                // up twice (has, then get); 2-3% more requests a second at 100,000 wallets.
                const byAddress = walletsByAddress(this.repository);
                results = page.addresses.map((address) =>
                    listed(byAddress?.get(address) ?? this.repository.findByAddress(address), address),
                );
            } else if (page.wallets) {
                // Wallets kept changing: the thread's copies, as they were when the page was made.
                results = page.wallets.map((wallet: TransferredWallet) => receiveWallet(wallet));
            } else {
                withWallets = true;
                continue;
            }
            await this.takeTurn();
            return { results, totalCount: page.totalCount, meta: EXACT_COUNT };
        }
    }

    /**
     * Answers come from the thread in bursts (the first listings of several orders, the requests
     * that waited for a block's changes), each taken in the same turn of the loop; a page's
     * response (its resources, core-api's transform, the JSON) costs a few milliseconds, so the
     * second page of a turn waits for a turn of its own instead of holding the loop with the first.
     * Its results are copies: what it answers is the state when its page was read.
     */
    private async takeTurn(): Promise<void> {
        if (this.pageThisTurn) {
            await yieldToEventLoop();
        }
        if (!this.pageThisTurn) {
            setImmediate(() => (this.pageThisTurn = false));
        }
        this.pageThisTurn = true;
    }

    /** Where the wallet thread stands: its lists' versions and its memory (diagnostics, benches, tests). */
    public async threadState(): Promise<WalletThreadState | undefined> {
        return (await this.ask({ kind: "state" })).state;
    }

    /** Nothing is left to send: the thread holds every wallet as it is now. */
    private caughtUp(): boolean {
        return this.synced && this.changedAddresses.size === 0;
    }

    /** Brings the thread up to the node's state, in slices; one catching up at a time. */
    private async catchUp(): Promise<void> {
        while (!this.caughtUp()) {
            this.catchingUp ??= this.catchUpOnce().finally(() => (this.catchingUp = undefined));
            await this.catchingUp;
        }
    }

    private async catchUpOnce(): Promise<void> {
        if (!this.worker) {
            // Starting a thread costs the node's thread 1.5-2.5 ms (V8's CPU profile): not in the turn
            // of the request that asked, which validated and routed it (on a first listing, others too).
            await yieldToEventLoop();
        }
        if (this.disposed) {
            throw new Error("the wallet listings are stopped");
        }
        this.worker ??= this.startThread();
        if (!this.synced) {
            await this.sendEverything();
            return;
        }
        await this.sendChanges();
    }

    /**
     * The thread held another number of wallets than the node when a listing was asked (a block
     * may create wallets no event told of): they are found and sent, or everything is sent again.
     */
    private async reconcileSize(held: number): Promise<void> {
        this.sizeUnsure = false;
        const size = repositorySize(this.repository);
        if (size < held) {
            this.synced = false; // a wallet was removed (a state rebuild): everything is sent again
        } else if (size > held) {
            await this.findUnsentWallets();
        }
    }

    /** Every wallet, in the repository's order, in slices. */
    private async sendEverything(): Promise<void> {
        const worker = this.worker;
        this.changedAddresses.clear();
        this.order?.startPass();
        this.sizeUnsure = false;
        this.post({ kind: "clear" });
        // The requests that asked have taken this turn of the loop already (the first listings come
        // together, each running cold code: 3-5 ms apiece at 100,000 wallets in a CPU profile). An
        // immediate would run the first slice in the same turn, before its timers: it waits for them.
        await yieldPastTimers();
        // Over the index itself: wallets changed once sent are noted and sent again after. A batch
        // is posted before each pause, so that it never outlives the slice that made it.
        const wallets = walletsOf(this.repository)[Symbol.iterator]();
        let sliceStart = performance.now();
        const order = this.order;
        for (let sent = false; !sent; ) {
            const batch: TransferredWallet[] = [];
            const positions: number[] = [];
            sent = stepSome(
                wallets,
                (wallet) => {
                    batch.push(transferWallet(wallet));
                    positions.push(order ? order.next() : KEEP_POSITION);
                },
                SYNC_BATCH,
            );
            this.post({ kind: "put", wallets: batch, positions });
            if (!sent && performance.now() - sliceStart > SLICE_MS) {
                await yieldToEventLoop();
                sliceStart = performance.now();
            }
        }
        // A thread started again meanwhile missed the start: it is sent everything again.
        this.synced = worker !== undefined && this.worker === worker;
    }

    /** Sends the wallets noted since the last time, as they are now, a slice at a time. */
    private async sendChanges(): Promise<void> {
        while (this.changedAddresses.size > 0) {
            const sliceStart = performance.now();
            const wallets: TransferredWallet[] = [];
            const positions: number[] = [];
            const removed: string[] = [];
            let taken = 0;
            for (const address of this.changedAddresses) {
                this.changedAddresses.delete(address);
                const position = this.order?.take(address) ?? KEEP_POSITION;
                if (this.repository.hasByAddress(address)) {
                    wallets.push(transferWallet(this.repository.findByAddress(address)));
                    positions.push(position);
                } else {
                    removed.push(address);
                }
                if ((++taken & 63) === 0 && performance.now() - sliceStart > SLICE_MS) {
                    break;
                }
            }
            if (removed.length > 0) {
                this.post({ kind: "remove", addresses: removed });
            }
            this.post({ kind: "put", wallets, positions });
            if (this.changedAddresses.size > 0) {
                await yieldToEventLoop();
            }
        }
    }

    /** Wallets the repository created without a wallet event (rare: a pass over the index). */
    private async findUnsentWallets(): Promise<void> {
        const answers: Array<Promise<WalletAnswer>> = [];
        let batch: string[] = [];
        await forOfSliced(walletsOf(this.repository), (wallet) => {
            batch.push(wallet.getAddress());
            if (batch.length === UNKNOWN_BATCH) {
                answers.push(this.ask({ kind: "unknown", addresses: batch }));
                batch = [];
            }
        });
        answers.push(this.ask({ kind: "unknown", addresses: batch }));
        for (const { unknown = [] } of await Promise.all(answers)) {
            unknown.forEach((address) => this.changedAddresses.add(address));
        }
    }

    private ask(question: WalletQuestion): Promise<WalletAnswer> {
        const worker = this.worker;
        if (!worker) {
            return Promise.reject(new Error("the wallet thread is not running"));
        }
        const id = ++this.lastQuestion;
        return new Promise((resolve, reject) => {
            if (this.questions.size === 0) {
                worker.ref(); // held while a question waits for its answer
            }
            this.questions.add(id, { resolve, reject });
            worker.postMessage({ kind: "ask", id, question } satisfies ToWallets);
        });
    }

    /** A message to the thread; without one, the next catching up starts one and sends everything. */
    private post(message: ToWallets): void {
        this.worker?.postMessage(message);
    }

    /** The wallet thread, started when first needed and again after it stopped unexpectedly. */
    private startThread(): Worker {
        const initialOldGenerationMb = (repositorySize(this.repository) * THREAD_BYTES_PER_WALLET) / 2 ** 20;
        const worker = withThreadHeap({ ...WALLET_THREAD_HEAP, initialOldGenerationMb }, () =>
            spawnWorker("wallet-thread", undefined, __dirname, this.options.threadNiceness),
        );
        worker.on("message", (message: FromWallets) => {
            const question = this.questions.take(message.id);
            if (this.questions.size === 0) {
                worker.unref();
            }
            question?.resolve(message);
        });
        const lost = (reason: string): void => {
            if (this.worker !== worker) {
                return;
            }
            this.worker = undefined;
            this.synced = false;
            this.order?.pause();
            this.failQuestions(`the wallet thread stopped: ${reason}`);
            this.options.onThreadError?.(
                `wallet listings: the wallet thread stopped (${reason}); it starts again with the next listing`,
            );
        };
        worker.on("error", (error) => lost(error.message));
        worker.on("exit", (code) => lost(`exit code ${code}`));
        // It keeps the process alive only while a question waits (dispose() ends it); unreferenced
        // after the listeners, which would reference it again.
        worker.unref();
        this.synced = false;
        return worker;
    }

    private failQuestions(reason: string): void {
        this.questions.takeAll().forEach(({ reject }) => reject(new Error(reason)));
    }
}
