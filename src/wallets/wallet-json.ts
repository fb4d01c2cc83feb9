import { WalletResource } from "@arkecosystem/core-api/dist/resources-new";
import { Contracts } from "@arkecosystem/core-kernel";

/**
 * A wallet of a listing, already written as the JSON core-api's body holds for it: the page's
 * envelope is then written around it (`writeEnvelope`) instead of serialising each wallet anew.
 */
export class SerializedWallet {
    public constructor(public readonly json: Buffer) {}
}

/** A listing's element: a wallet written already, or a copy of one still to be written. */
export type ListedWallet = SerializedWallet | WalletResource;

/** core-api's resource for a wallet (`WalletSearchService.getWalletResourceFromWallet`), its fields in its order. */
export const toResource = (
    wallet: Contracts.State.Wallet,
    attributes: object = wallet.getAttributes(),
): WalletResource => ({
    address: wallet.getAddress(),
    publicKey: wallet.getPublicKey(),
    balance: wallet.getBalance(),
    nonce: wallet.getNonce(),
    attributes,
});

const utf8 = (text: string): Buffer => {
    // Unpooled: a cached wallet kept in a slab of Buffer's shared pool would keep all 8 KB of it.
    const buffer = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
    buffer.write(text);
    return buffer;
};

/**
 * The node's wallets as listings write them, kept until the wallet changes. Writing a page's
 * wallets was some 40% of a listing's time on the node's thread (their resources, the copies of
 * their attributes, JSON.stringify over them and their BigNumbers) and half its garbage; a page
 * asked again now costs a copy of bytes. Every mutation of a core-state wallet dispatches `wallet.property.set`
 * synchronously, which forgets it here; an entry also names the wallet object it was written from,
 * so that a wallet the repository replaced (a state rebuild) is written again.
 *
 * Bounded: the oldest entries go first once `capacity` are kept (a client paging through every
 * wallet would otherwise copy the whole state into the node's memory).
 */
export class WalletJsonCache {
    private readonly entries = new Map<string, { wallet: Contracts.State.Wallet; json: SerializedWallet }>();

    public constructor(private readonly capacity: number) {}

    public get size(): number {
        return this.entries.size;
    }

    /**
     * The wallet at `address` as a listing writes it now. The address is the caller's, so that a
     * wallet written already is not read at all: on a large state most wallets sit in memory
     * nothing else has touched for a while, and touching it is what a page then costs.
     */
    public serialized(address: string, wallet: Contracts.State.Wallet): SerializedWallet {
        const entry = this.entries.get(address);
        if (entry?.wallet === wallet) {
            return entry.json;
        }
        // Written at once from the wallet's own attributes: nothing can change them meanwhile.
        const json = new SerializedWallet(utf8(JSON.stringify(toResource(wallet))));
        this.entries.delete(address);
        this.entries.set(address, { wallet, json });
        if (this.entries.size > this.capacity) {
            this.entries.delete(this.entries.keys().next().value as string);
        }
        return json;
    }

    /** The wallet changed: its JSON is written again when next listed. */
    public forget(address: string): void {
        this.entries.delete(address);
    }

    public clear(): void {
        this.entries.clear();
    }
}

const COMMA = Buffer.from(",");

/**
 * The bytes `JSON.stringify(envelope)` writes, for an envelope whose `data` holds wallets written
 * already: its other keys are serialised as JSON.stringify would, in their order, and `data`'s
 * elements are copied in (or written, for those that are not).
 */
export const writeEnvelope = (envelope: Record<string, unknown> & { data: readonly ListedWallet[] }): Buffer => {
    const parts: Buffer[] = [];
    let text = "{";
    let members = 0;
    const separator = (): string => (members++ === 0 ? "" : ",");
    for (const key of Object.keys(envelope)) {
        if (key === "data") {
            parts.push(Buffer.from(`${text}${separator()}${JSON.stringify(key)}:[`));
            envelope.data.forEach((wallet, index) => {
                if (index > 0) {
                    parts.push(COMMA);
                }
                parts.push(
                    wallet instanceof SerializedWallet ? wallet.json : Buffer.from(JSON.stringify(wallet) ?? "null"),
                );
            });
            text = "]";
            continue;
        }
        const value: string | undefined = JSON.stringify(envelope[key]);
        if (value !== undefined) {
            text += `${separator()}${JSON.stringify(key)}:${value}`;
        }
    }
    parts.push(Buffer.from(`${text}}`));
    return Buffer.concat(parts);
};
