import "./reflect-metadata";

import { WalletResource } from "@arkecosystem/core-api/dist/resources-new";
import { Services } from "@arkecosystem/core-kernel";
import { getHeapStatistics } from "v8";
import { parentPort } from "worker_threads";

import { FromWallets, ToWallets, WalletAnswer, WalletQuestion } from "./wallet-messages";
import { WalletLists } from "./wallet-lists";
import { bigNumbersAsBigInts, toTransferable } from "./wallet-transfer";

// The wallet lists' thread: their entries, sorted lists and the garbage of sorting a million
// wallets live in this heap, not the node's, and no sort or patch runs on the node's loop.
const port = parentPort;
if (!port) {
    throw new Error("wallet-thread runs as a worker thread");
}

const lists = new WalletLists(new Services.Search.StandardCriteriaService());

const answer = async (question: WalletQuestion): Promise<WalletAnswer> => {
    switch (question.kind) {
        case "page": {
            if (question.expectedSize !== undefined && question.expectedSize !== lists.size) {
                return { size: lists.size };
            }
            const { results, totalCount } = await lists.page(
                question.pagination,
                question.sorting,
                ...question.criterias,
            );
            return {
                page: {
                    addresses: results.map((wallet) => wallet.address),
                    ...(question.withWallets ? { wallets: results.map(toTransferable) } : {}),
                    totalCount,
                },
            };
        }
        case "unknown":
            return { unknown: question.addresses.filter((address) => !lists.has(address)) };
        case "state": {
            // Where the process exposes it (the benches), the figures leave garbage out.
            (globalThis as { gc?: () => void }).gc?.();
            const heap = getHeapStatistics();
            return { state: { ...lists.state(), heapUsed: heap.used_heap_size, external: heap.external_memory } };
        }
    }
};

const toNodeThread = (message: FromWallets): void => port.postMessage(message);

port.on("message", (message: ToWallets) => {
    switch (message.kind) {
        case "put":
            // Kept with bigints where the node has BigNumbers: core-api's comparisons and criteria
            // treat both alike, and a million wallets' BigNumber objects would double this heap's work.
            lists.put(
                message.wallets.map((wallet) => bigNumbersAsBigInts(wallet) as WalletResource),
                message.positions,
            );
            return;
        case "remove":
            lists.remove(message.addresses);
            return;
        case "clear":
            lists.clear();
            return;
        case "refresh":
            void lists.refresh();
            return;
        case "ask":
            answer(message.question).then(
                (answered) => toNodeThread({ kind: "answer", id: message.id, ...answered }),
                (error: unknown) =>
                    toNodeThread({
                        kind: "answer",
                        id: message.id,
                        error: error instanceof Error ? error.message : String(error),
                    }),
            );
            return;
    }
});
