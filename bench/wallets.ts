import { AddressInfo } from "net";

import Hapi from "@hapi/hapi";

import { createWalletState } from "../__tests__/support/wallet-state";
import { createHttpServer } from "../src/http/server";
import { walletRoutesPlugin } from "../src/wallets/wallet-routes";
import { formatRow, runLoad } from "./load";

const WALLETS = 100_000;
const QUERIES = [
    "/api/wallets?limit=100",
    "/api/wallets?orderBy=balance:desc&page=50",
    "/api/wallets?balance.from=1000000000000",
];
const LOAD = { concurrency: 4, maxRequests: 100_000, maxMs: 10_000 };
// As on a node: every wallet may change with each block, which empties the catalogue.
const BLOCK_TIME_MS = 8_000;

const urlOf = (server: Hapi.Server): string => `http://127.0.0.1:${(server.listener.address() as AddressInfo).port}`;

/** core-api's wallet routes and ours over one core-state repository of 100,000 wallets. */
export const benchWallets = async (): Promise<string[]> => {
    const state = createWalletState(WALLETS);
    const ours = await createHttpServer(
        { host: "127.0.0.1", port: 0, whitelist: ["127.0.0.1"], apiKey: "", bodyBytes: 65536 },
        async (server) => {
            await server.register({ plugin: walletRoutesPlugin, options: state.routes });
        },
    );
    const coreApi = await state.coreApiServer();
    await Promise.all([ours.start(), coreApi.start()]);
    const rows = [
        `Wallet listings, ${WALLETS.toLocaleString("en")} wallets in a core-state WalletRepository, concurrency ${LOAD.concurrency}, up to ${LOAD.maxRequests} requests or ${LOAD.maxMs / 1000} s each; ours rebuilds its catalogue every ${BLOCK_TIME_MS / 1000} s as if a block had changed every wallet`,
        "",
        "| query | core-api req/s | core-api p50 ms | ours req/s | ours p50 ms | ours p99 ms | ratio (req/s) | bodies equal |",
        "|---|---|---|---|---|---|---|---|",
    ];
    try {
        for (const query of QUERIES) {
            const [a, b] = await Promise.all([
                fetch(`${urlOf(ours)}${query}`).then((response) => response.text()),
                fetch(`${urlOf(coreApi)}${query}`).then((response) => response.text()),
            ]);
            const theirs = await runLoad({ urls: [`${urlOf(coreApi)}${query}`] }, LOAD);
            state.catalogue.invalidate();
            const blocks = setInterval(() => state.catalogue.invalidate(), BLOCK_TIME_MS);
            const mine = await runLoad({ urls: [`${urlOf(ours)}${query}`] }, LOAD);
            clearInterval(blocks);
            rows.push(
                formatRow([
                    `\`${query}\``,
                    theirs.perSecond,
                    theirs.p50Ms,
                    mine.perSecond,
                    mine.p50Ms,
                    mine.p99Ms,
                    `${(mine.perSecond / theirs.perSecond).toFixed(1)}×`,
                    a === b ? "yes" : "NO",
                ]),
            );
        }
    } finally {
        await Promise.all([ours.stop(), coreApi.stop()]);
    }
    return rows;
};
