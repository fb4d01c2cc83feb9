import { Contracts } from "@arkecosystem/core-kernel";

/** What of core-state 3.9.1's WalletIndex the order follows. */
interface AddressIndex {
    has(key: string): boolean;
    set(key: string, wallet: Contracts.State.Wallet): void;
    forget(key: string): void;
    forgetWallet(wallet: Contracts.State.Wallet): void;
    walletKeys(wallet: Contracts.State.Wallet): string[];
}

const FOLLOWED_METHODS = ["set", "forget", "forgetWallet"] as const;

const isAddressIndex = (index: unknown): index is AddressIndex =>
    typeof index === "object" &&
    index !== null &&
    [...FOLLOWED_METHODS, "has", "walletKeys"].every(
        (method) => typeof (index as Record<string, unknown>)[method] === "function",
    );

/**
 * Where each wallet stands in the node's address index, which is the order core-api's stable sort
 * keeps among wallets of equal keys. The index is a Map: a new wallet goes to its end, and so does
 * every wallet the repository indexes again (`index(wallet)` forgets the wallet's keys and sets
 * them anew: a delegate registration, a vote, a lock). So a position is a number taken from one
 * counter whenever a wallet's address is set afresh, and the wallets' order in the Map is the
 * order of their last positions. The counter is followed by wrapping the index's own `set`,
 * `forget` and `forgetWallet`, each O(1) beside what they do.
 */
export class RepositoryOrder {
    private nextPosition = 0;
    /** Positions taken since they were last sent, by address, while a pass has sent the rest. */
    private readonly moved = new Map<string, number>();
    private recording = false;
    /** What the index had as its own methods before (another follower's), given back by stop(). */
    private readonly replaced = new Map<string, PropertyDescriptor | undefined>();

    private constructor(
        private readonly index: AddressIndex,
        onChange: (address: string) => void,
    ) {
        const original = {
            set: index.set.bind(index),
            forget: index.forget.bind(index),
            forgetWallet: index.forgetWallet.bind(index),
        };
        const followed: Pick<AddressIndex, (typeof FOLLOWED_METHODS)[number]> = {
            set: (key, wallet) => {
                const appended = !index.has(key);
                original.set(key, wallet);
                if (appended) {
                    const position = this.nextPosition++;
                    if (this.recording) {
                        this.moved.set(key, position);
                    }
                    onChange(key);
                }
            },
            forget: (key) => {
                original.forget(key);
                onChange(key);
            },
            forgetWallet: (wallet) => {
                const keys = index.walletKeys(wallet);
                original.forgetWallet(wallet);
                keys.forEach(onChange);
            },
        };
        for (const method of FOLLOWED_METHODS) {
            this.replaced.set(method, Object.getOwnPropertyDescriptor(index, method));
            Object.defineProperty(index, method, { value: followed[method], configurable: true, writable: true });
        }
    }

    /** Follows the repository's address index; undefined where it is not core-state 3.9.1's. */
    public static follow(
        repository: Pick<Contracts.State.WalletRepository, "getIndex">,
        onChange: (address: string) => void,
    ): RepositoryOrder | undefined {
        const index: unknown = repository.getIndex(Contracts.State.WalletIndexes.Addresses);
        return isAddressIndex(index) ? new RepositoryOrder(index, onChange) : undefined;
    }

    /** A position after every one taken so far: the next wallet of a pass over the index in its order. */
    public next(): number {
        return this.nextPosition++;
    }

    /** The position the wallet took since it was last sent, if it took one. */
    public take(address: string): number | undefined {
        const position = this.moved.get(address);
        this.moved.delete(address);
        return position;
    }

    /**
     * Everything is sent again, each wallet with a position of the pass; wallets set afresh from
     * now on are recorded. Before the first pass nothing is (a state being built sets them all).
     */
    public startPass(): void {
        this.moved.clear();
        this.recording = true;
    }

    /** Nothing is recorded until the next pass (the thread that held the wallets is gone). */
    public pause(): void {
        this.moved.clear();
        this.recording = false;
    }

    /** Gives the index its own methods back. */
    public stop(): void {
        for (const [method, descriptor] of this.replaced) {
            if (descriptor) {
                Object.defineProperty(this.index, method, descriptor);
            } else {
                Reflect.deleteProperty(this.index, method);
            }
        }
        this.pause();
    }
}
