import { Services } from "@arkecosystem/core-kernel";
import { Wallets } from "@arkecosystem/core-state";
import { Utils } from "@arkecosystem/crypto";

import { SerializedWallet, toResource, WalletJsonCache, writeEnvelope } from "../../../src/wallets/wallet-json";

const attributeSet = (): Services.Attributes.AttributeSet => {
    const set = new Services.Attributes.AttributeSet();
    ["delegate", "delegate.username", "delegate.voteBalance", "vote"].forEach((name) => set.set(name));
    return set;
};

const walletAt = (address: string, balance: number): Wallets.Wallet => {
    const wallet = new Wallets.Wallet(address, new Services.Attributes.AttributeMap(attributeSet()));
    wallet.setBalance(Utils.BigNumber.make(balance));
    return wallet;
};

const text = (serialized: SerializedWallet): string => serialized.json.toString();

describe("wallets kept written as JSON", () => {
    it("writes a wallet as core-api's resource serialises, BigNumbers and attributes included", () => {
        const wallet = walletAt("AYzyUFvKgHtNnJHfJLVBJgxxBwC8mjyn4q", 1_000);
        wallet.setAttribute("delegate.username", "zoë_ünïcode");
        wallet.setAttribute("delegate.voteBalance", Utils.BigNumber.make("1000000000000000000379"));

        const cache = new WalletJsonCache(10);

        expect(text(cache.serialized(wallet.getAddress(), wallet))).toBe(JSON.stringify(toResource(wallet)));
        expect(JSON.parse(text(cache.serialized(wallet.getAddress(), wallet)))).toEqual({
            address: "AYzyUFvKgHtNnJHfJLVBJgxxBwC8mjyn4q",
            balance: "1000",
            nonce: "0",
            attributes: { delegate: { username: "zoë_ünïcode", voteBalance: "1000000000000000000379" } },
        });
    });

    it("answers from what it wrote until the wallet is forgotten, then writes it as it is now", () => {
        const wallet = walletAt("AYzyUFvKgHtNnJHfJLVBJgxxBwC8mjyn4q", 1);
        const cache = new WalletJsonCache(10);
        const first = cache.serialized(wallet.getAddress(), wallet);

        wallet.setBalance(Utils.BigNumber.make(2));
        expect(cache.serialized(wallet.getAddress(), wallet)).toBe(first);

        cache.forget(wallet.getAddress());
        expect(JSON.parse(text(cache.serialized(wallet.getAddress(), wallet))).balance).toBe("2");
    });

    it("writes again a wallet the repository replaced at the same address", () => {
        const cache = new WalletJsonCache(10);
        const replaced = walletAt("AYzyUFvKgHtNnJHfJLVBJgxxBwC8mjyn4q", 1);
        cache.serialized(replaced.getAddress(), replaced);

        const replacement = walletAt("AYzyUFvKgHtNnJHfJLVBJgxxBwC8mjyn4q", 5);

        expect(JSON.parse(text(cache.serialized(replacement.getAddress(), replacement))).balance).toBe("5");
        expect(cache.size).toBe(1);
    });

    it("keeps at most its capacity, the oldest going first", () => {
        const cache = new WalletJsonCache(3);
        const wallets = [1, 2, 3, 4].map((index) => walletAt(`address-${index}`, index));
        const written = wallets.map((wallet) => cache.serialized(wallet.getAddress(), wallet));

        expect(cache.size).toBe(3);
        expect(cache.serialized(wallets[3].getAddress(), wallets[3])).toBe(written[3]);
        expect(cache.serialized(wallets[1].getAddress(), wallets[1])).toBe(written[1]);
        expect(cache.serialized(wallets[0].getAddress(), wallets[0])).not.toBe(written[0]); // the oldest, dropped
        expect(cache.size).toBe(3);
    });
});

describe("a listing's envelope written around its wallets", () => {
    const cache = new WalletJsonCache(10);
    const wallets = [walletAt("a-wallet", 7), walletAt("another-wallet", 9)];
    wallets[1].setAttribute("vote", "02a1b2");

    const envelopes: Array<[string, Record<string, unknown>]> = [
        [
            "core-api's pagination envelope",
            {
                meta: { totalCountIsEstimate: false, count: 2, next: null, self: "/wallets?page=1&limit=2" },
                data: wallets,
            },
        ],
        ["data first, undefined and function values left out", { data: wallets, skipped: undefined, fn: () => 1 }],
        ["an empty page", { meta: { count: 0 }, data: [] }],
        ["keys after data", { meta: {}, data: wallets, extra: ["é", 2] }],
        [
            "one wallet, characters of several bytes before it",
            { meta: { self: "/wallets?username=zoë_ü" }, data: [wallets[0]] },
        ],
    ];

    it.each(envelopes)("%s: the bytes JSON.stringify writes", (_, envelope) => {
        const resources = (envelope.data as Wallets.Wallet[]).map((wallet) => toResource(wallet));
        const listed = (envelope.data as Wallets.Wallet[]).map((wallet) =>
            cache.serialized(wallet.getAddress(), wallet),
        );

        expect(writeEnvelope({ ...envelope, data: listed }).toString()).toBe(
            JSON.stringify({ ...envelope, data: resources }),
        );
    });

    it("writes resources that came unwritten (copies from the wallet thread) as JSON.stringify does", () => {
        const listed = [cache.serialized(wallets[0].getAddress(), wallets[0]), toResource(wallets[1])];
        const envelope = { meta: { count: 2 }, data: listed };

        expect(writeEnvelope(envelope).toString()).toBe(
            JSON.stringify({ meta: { count: 2 }, data: wallets.map((wallet) => toResource(wallet)) }),
        );
    });

    it("sizes the body by bytes, not characters, where an unwritten wallet holds characters of several bytes", () => {
        const unicode = walletAt("a-wallet-of-ünïcode", 3);
        unicode.setAttribute("delegate.username", "zoë_ünïcode_🙂");
        const listed = [
            toResource(unicode),
            cache.serialized(wallets[0].getAddress(), wallets[0]),
            toResource(unicode),
        ];
        const expected = JSON.stringify({
            data: [toResource(unicode), toResource(wallets[0]), toResource(unicode)],
            é: 1,
        });

        const body = writeEnvelope({ data: listed, é: 1 });

        expect(body.toString()).toBe(expected);
        expect(body.length).toBe(Buffer.byteLength(expected));
    });
});
