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

const COMMA = 0x2c;

/**
 * The bytes `JSON.stringify(envelope)` writes, for an envelope whose `data` holds wallets written
 * already: its other keys are serialised as JSON.stringify would, in their order, and `data`'s
 * elements are copied in (or written, for those that are not). The body is one allocation, sized
 * before it is filled: a list of parts and their concatenation were 5.6 KB of the node's garbage a
 * page of 100 (a sampling heap profile), a young collection's worth every 3,000 requests.
 */
export const writeEnvelope = (envelope: Record<string, unknown> & { data: readonly ListedWallet[] }): Buffer => {
    let head = "{";
    let tail = "";
    let members = 0;
    let afterData = false;
    for (const key of Object.keys(envelope)) {
        const value: string | undefined = key === "data" ? "" : JSON.stringify(envelope[key]);
        if (value === undefined) {
            continue;
        }
        const member = `${members++ === 0 ? "" : ","}${JSON.stringify(key)}:${key === "data" ? "[" : value}`;
        if (key === "data") {
            afterData = true;
            head += member;
            tail = "]";
        } else if (afterData) {
            tail += member;
        } else {
            head += member;
        }
    }
    tail += "}";
    const written = envelope.data.map((wallet) =>
        wallet instanceof SerializedWallet ? wallet.json : (JSON.stringify(wallet) ?? "null"),
    );
    const lengthOf = (part: Buffer | string): number =>
        typeof part === "string" ? Buffer.byteLength(part) : part.length;
    const size =
        Buffer.byteLength(head) +
        written.reduce((total, part) => total + lengthOf(part), 0) +
        Math.max(0, written.length - 1) +
        Buffer.byteLength(tail);
    const body = Buffer.allocUnsafe(size);
    let offset = body.write(head);
    written.forEach((part, index) => {
        if (index > 0) {
            body[offset++] = COMMA;
        }
        offset += typeof part === "string" ? body.write(part, offset) : part.copy(body, offset);
    });
    body.write(tail, offset);
    return body;
};
