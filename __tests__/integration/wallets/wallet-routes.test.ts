import Hapi from "@hapi/hapi";

import { Application, Container, Contracts } from "@arkecosystem/core-kernel";
import { Identities, Utils } from "@arkecosystem/crypto";

import { createHttpServer } from "../../../src/http/server";
import { createWalletServices } from "../../../src/wallets/wallet-services";
import { walletRoutesPlugin } from "../../../src/wallets/wallet-routes";
import { createWalletState, WalletState } from "../../support/wallet-state";

const WALLETS = 1_000;

/** Queries over every listing parameter, valid and not: each must get core-api's exact answer. */
const LISTING_QUERIES = [
    "",
    "?limit=5",
    "?page=3&limit=7",
    "?offset=13&limit=9",
    "?page=200&limit=100",
    "?orderBy=balance:asc",
    "?orderBy=balance:desc&page=5",
    "?orderBy=nonce:asc&limit=20",
    "?orderBy=nonce:desc,address:asc&limit=20",
    "?orderBy=address:asc&page=2&limit=25",
    "?orderBy=publicKey:desc&limit=30",
    "?orderBy=attributes.delegate.voteBalance:desc&limit=10",
    "?orderBy=attributes.delegate.rank:asc&limit=10",
    "?balance=0",
    "?balance.from=1000000000&limit=50",
    "?balance.to=1000&orderBy=balance:asc",
    "?balance.from=100&balance.to=100000000&page=2&limit=10",
    "?nonce=3",
    "?nonce=1,2,3&orderBy=nonce:desc",
    "?balance=0,1000",
    "?balance.from=5000&nonce.to=4&limit=40",
    "?nonce.from=5&nonce.to=7&orderBy=nonce:asc",
    // Each range criterion takes a value or a { from, to }; the order the two are tried in is ours.
    "?balance=",
    "?balance.from=",
    "?balance.to=0",
    "?nonce.from=0",
    "?balance.from=1000000000&balance=0,1000",
    "?balance=1000000000&balance.from=5",
    "?attributes.delegate.username=delegate_50",
    "?attributes.vote=__PUBLIC_KEY__",
    "?address=__ADDRESS__",
    "?address=__ADDRESS__,__OTHER_ADDRESS__",
    "?publicKey=__PUBLIC_KEY__",
];

/** Refused by core-api's schemas: the same 422 and message are expected. */
const REFUSED_QUERIES = [
    "?limit=1000",
    "?limit=0",
    "?page=0",
    "?orderBy=balance:sideways",
    "?orderBy=unknown:asc",
    "?balance=abc",
    "?nonce.from=-1",
    "?balance=1.5",
    "?balance.from=abc",
    "?balance.from=1&balance.to=x",
    "?balance.foo=1",
    "?nonce=-1",
    "?nonce.from=abc&nonce.to=-1",
    "?nonce.from=1&nonce.upTo=2",
    "?balance.from=1e3",
    "?address=not-an-address",
];

/** The same bytes, not just the same values: clients hash and cache bodies. */
const expectSameAnswer = (mine: Hapi.ServerInjectResponse, theirs: Hapi.ServerInjectResponse): void => {
    expect(mine.payload).toBe(theirs.payload);
    expect(mine.headers["content-type"]).toBe(theirs.headers["content-type"]);
};

describe("the wallet routes, side by side with core-api 3.9.1's over one core-state repository", () => {
    let state: WalletState;
    let ours: Hapi.Server;
    let coreApi: Hapi.Server;
    let delegatePublicKey: string;
    let address: string;
    let otherAddress: string;

    beforeAll(async () => {
        state = createWalletState(WALLETS);
        ours = await createHttpServer(
            { host: "127.0.0.1", port: 0, whitelist: ["*"], apiKey: "", bodyBytes: 65536 },
            async (server) => {
                await server.register({ plugin: walletRoutesPlugin, options: state.routes });
            },
        );
        coreApi = await state.coreApiServer();
        const wallets = state.repository.allByAddress();
        const delegate = wallets.find((wallet) => wallet.hasAttribute("delegate.username"));
        delegatePublicKey = delegate?.getPublicKey() as string;
        address = wallets[10].getAddress();
        otherAddress = wallets[20].getAddress();
    });

    afterAll(async () => {
        await state.catalogue.dispose();
    });

    const both = async (url: string) => {
        const expand = (text: string) =>
            text
                .replace(/__PUBLIC_KEY__/g, delegatePublicKey)
                .replace(/__OTHER_ADDRESS__/g, otherAddress)
                .replace(/__ADDRESS__/g, address);
        const [mine, theirs] = await Promise.all([ours.inject(expand(url)), coreApi.inject(expand(url))]);
        return { mine, theirs };
    };

    it.each(LISTING_QUERIES)("GET /api/wallets%s answers as core-api does", async (query) => {
        const { mine, theirs } = await both(`/api/wallets${query}`);

        expect(mine.statusCode).toBe(200);
        expectSameAnswer(mine, theirs);
    });

    it.each(["?page=2&limit=10", "?limit=5&orderBy=balance:asc", "/top?page=3&limit=2"])(
        "GET /api/v2/wallets%s answers core-api's body, links relative to the base path",
        async (query) => {
            const expanded = query.replace(/__ADDRESS__/g, address);
            const [mine, theirs] = await Promise.all([
                ours.inject(`/api/v2/wallets${expanded}`),
                coreApi.inject(`/api/wallets${expanded}`),
            ]);

            expect(mine.statusCode).toBe(200);
            expectSameAnswer(mine, theirs);
            expect(JSON.parse(mine.payload).meta.self).toMatch(/^\/wallets/);
        },
    );

    it.each(REFUSED_QUERIES)("GET /api/wallets%s is refused as core-api refuses it", async (query) => {
        const { mine, theirs } = await both(`/api/wallets${query}`);

        expect(mine.statusCode).toBe(422);
        expect(theirs.statusCode).toBe(422);
        expectSameAnswer(mine, theirs);
    });

    it("lists every wallet, the empty ones and the ones known by address only", async () => {
        const { mine } = await both("/api/wallets?limit=100");
        const body = JSON.parse(mine.payload);

        expect(body.meta.totalCount).toBe(WALLETS);
        expect(body.data.some((wallet: { publicKey?: string }) => wallet.publicKey === undefined)).toBe(true);
        const last = JSON.parse((await both(`/api/wallets?limit=100&page=${WALLETS / 100}`)).mine.payload);
        expect(last.data.some((wallet: { balance: string }) => wallet.balance === "0")).toBe(true);
    });

    it.each(["__ADDRESS__", "__PUBLIC_KEY__", "delegate_50", "AUnknownAddressxxxxxxxxxxxxxxxxxxx", "not a wallet!"])(
        "GET /api/wallets/%s answers as core-api does",
        async (id) => {
            const { mine, theirs } = await both(`/api/wallets/${encodeURIComponent(id)}`);

            expect(mine.statusCode).toBe(theirs.statusCode);
            expectSameAnswer(mine, theirs);
        },
    );

    it("follows the state: a changed balance reorders the next listing", async () => {
        const wallet = state.repository.findByAddress(address);
        wallet.setBalance(wallet.getBalance().plus("1000000000000000000000"));

        const { mine, theirs } = await both("/api/wallets?limit=1");

        expect(JSON.parse(mine.payload).data[0].address).toBe(address);
        expectSameAnswer(mine, theirs);
    });

    it("shows a wallet created without a wallet event at once, as core-api does (the address index is followed)", async () => {
        const before = JSON.parse((await both("/api/wallets?limit=1")).mine.payload).meta.totalCount;
        // findByAddress creates and indexes an unknown wallet silently, as block processing can.
        state.repository.findByAddress(Identities.Address.fromPassphrase("created without an event"));

        const { mine, theirs } = await both("/api/wallets?limit=1");

        expect(JSON.parse(mine.payload).meta.totalCount).toBe(before + 1);
        expectSameAnswer(mine, theirs);
    });

    it("stays equal to core-api in every kept order and filter while wallets change between requests", async () => {
        const queries = [
            "?limit=20",
            "?orderBy=balance:asc&limit=20",
            "?orderBy=nonce:desc,address:asc&limit=15&page=3",
            "?orderBy=attributes.delegate.voteBalance:desc&limit=10",
            "?orderBy=attributes.delegate.username:asc&limit=5",
            "?balance.from=1000000000&limit=20",
            `?attributes.vote=${delegatePublicKey}&limit=50`,
            "/top?limit=10",
        ];
        const compareAll = async (step: string): Promise<void> => {
            for (const query of queries) {
                const { mine, theirs } = await both(`/api/wallets${query}`);
                expect({ step, query, body: mine.payload, type: mine.headers["content-type"] }).toEqual({
                    step,
                    query,
                    body: theirs.payload,
                    type: theirs.headers["content-type"],
                });
            }
        };
        const events = state.app.get<Contracts.Kernel.EventDispatcher>(Container.Identifiers.EventDispatcherService);
        const wallets = state.repository.allByAddress();
        const delegate = state.repository.findByPublicKey(delegatePublicKey);
        await compareAll("before");

        const [sender, recipient] = [wallets[5], wallets[6]];
        const amount = sender.getBalance().dividedBy(2);
        sender.decreaseBalance(amount);
        sender.increaseNonce();
        recipient.increaseBalance(amount);
        events.dispatchSync("block.applied", {});
        await compareAll("a transfer");

        const voter = wallets[31];
        if (voter.hasAttribute("vote")) {
            voter.forgetAttribute("vote");
        }
        voter.setAttribute("vote", delegatePublicKey);
        delegate.setAttribute(
            "delegate.voteBalance",
            delegate.getAttribute<Utils.BigNumber>("delegate.voteBalance").plus(voter.getBalance()),
        );
        await compareAll("a vote");

        const candidate = wallets.find((wallet) => wallet.getPublicKey() && !wallet.hasAttribute("delegate"));
        candidate?.setAttribute("delegate.username", "a_new_delegate");
        candidate?.setAttribute("delegate.voteBalance", Utils.BigNumber.make("999999999999999999"));
        if (candidate) {
            state.repository.index(candidate);
        }
        await compareAll("a delegate registration");

        sender.increaseBalance(amount);
        sender.decreaseNonce();
        recipient.decreaseBalance(amount);
        events.dispatchSync("block.reverted", {});
        await compareAll("the transfer's block reverted");

        const newcomer = state.repository.findByAddress(Identities.Address.fromPassphrase("a brand new recipient"));
        newcomer.setBalance(Utils.BigNumber.make("123456789012345678"));
        events.dispatchSync("block.applied", {});
        await compareAll("a transfer to a new wallet");

        // Many blocks' worth of changes at once, more than a list is patched for: it is sorted again.
        for (const wallet of wallets.slice(100, 2_000)) {
            wallet.increaseBalance(Utils.BigNumber.make(7));
        }
        await compareAll("a rebuild");
    });

    it("keeps core-api's order among wallets of equal keys while the repository indexes them again", async () => {
        const events = state.app.get<Contracts.Kernel.EventDispatcher>(Container.Identifiers.EventDispatcherService);
        const tied = "777777777";
        const queries = [
            `?balance=${tied}`,
            `?balance=${tied}&orderBy=balance:asc`,
            `?balance=${tied}&orderBy=nonce:asc`,
            `?balance=${tied}&orderBy=nonce:desc`,
            `?balance.from=${tied}&balance.to=${tied}&orderBy=publicKey:asc`,
            `?nonce=0&balance=${tied}`,
            "?orderBy=balance:desc&limit=100",
            "?orderBy=nonce:asc&limit=100",
            "?orderBy=balance:asc&limit=100",
        ];
        const compareAll = async (step: string): Promise<void> => {
            for (const query of queries) {
                const { mine, theirs } = await both(`/api/wallets${query}`);
                expect({ step, query, body: mine.payload }).toEqual({ step, query, body: theirs.payload });
            }
        };
        const passphrases = Array.from({ length: 12 }, (_, index) => `tied wallet ${index}`);
        const twins = passphrases.map((passphrase) => {
            const wallet = state.repository.findByAddress(Identities.Address.fromPassphrase(passphrase));
            wallet.setBalance(Utils.BigNumber.make(tied));
            return wallet;
        });
        events.dispatchSync("block.applied", {});
        expect(JSON.parse((await both(`/api/wallets?balance=${tied}`)).mine.payload).data).toHaveLength(12);
        await compareAll("new wallets of one balance");

        // A sender's first transaction: its public key is indexed (the address keeps its place).
        const sender = state.repository.findByPublicKey(Identities.PublicKey.fromPassphrase(passphrases[2]));
        sender.increaseNonce();
        sender.decreaseNonce();
        events.dispatchSync("block.applied", {});
        await compareAll("a public key indexed");

        // index() forgets the wallet's keys and sets them again: it moves to the index's end.
        state.repository.index(twins[1]);
        twins[4].setAttribute("delegate.username", "tied_delegate");
        twins[4].setAttribute("delegate.voteBalance", Utils.BigNumber.ZERO);
        state.repository.index(twins[4]);
        events.dispatchSync("block.applied", {});
        await compareAll("two wallets indexed again");

        // The same without a block between: the next listing alone must see the moves.
        state.repository.index(twins[0]);
        twins[7].setAttribute("vote", twins[4].getPublicKey() ?? "");
        state.repository.index(twins[7]);
        await compareAll("indexed again between blocks");

        // A revert puts a balance back: the wallet rejoins the tie where the index now holds it.
        twins[9].increaseBalance(Utils.BigNumber.ONE);
        events.dispatchSync("block.applied", {});
        state.repository.index(twins[9]);
        twins[9].decreaseBalance(Utils.BigNumber.ONE);
        events.dispatchSync("block.reverted", {});
        await compareAll("a block reverted");
    });

    it("drops a wallet the state forgot without a wallet event once a block is applied", async () => {
        const listed = JSON.parse((await both("/api/wallets?orderBy=balance:asc&limit=1")).mine.payload);
        const forgotten: string = listed.data[0].address;
        const before: number = listed.meta.totalCount;
        // As a state rebuild can: the wallet leaves the index, and no event says so.
        state.repository.forgetOnIndex(Contracts.State.WalletIndexes.Addresses, forgotten);
        state.app
            .get<Contracts.Kernel.EventDispatcher>(Container.Identifiers.EventDispatcherService)
            .dispatchSync("block.applied", {});

        const { mine, theirs } = await both("/api/wallets?orderBy=balance:asc&limit=5");
        expect(JSON.parse(mine.payload).meta.totalCount).toBe(before - 1);
        expect(JSON.parse(mine.payload).data.map((wallet: { address: string }) => wallet.address)).not.toContain(
            forgotten,
        );
        expectSameAnswer(mine, theirs);
    });

    it("serves no wallet routes in a node without core-api", () => {
        expect(createWalletServices(new Application(new Container.Container()))).toBeUndefined();
    });
});
