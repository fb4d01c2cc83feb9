/** What the node's thread and the wallet thread say to each other; both sides import these types. */
import { WalletCriteria } from "@arkecosystem/core-api/dist/resources-new";
import { Contracts } from "@arkecosystem/core-kernel";

import { TransferredWallet } from "./wallet-transfer";

export type WalletQuestion =
    | {
          kind: "page";
          pagination: Contracts.Search.Pagination;
          sorting: Contracts.Search.Sorting;
          criterias: WalletCriteria[];
          /** The page's wallets as the thread holds them; otherwise only their addresses. */
          withWallets: boolean;
          /**
           * How many wallets the node holds, when a block may have created some no event told of:
           * a thread that holds another number answers its own (`size`) instead of the page.
           */
          expectedSize?: number;
      }
    /** Which of these addresses the thread does not hold. */
    | { kind: "unknown"; addresses: string[] }
    | { kind: "state" };

/** A wallet sent without a position keeps the one it has, or comes after every other if new. */
export const KEEP_POSITION = -1;

/** From the node's thread to the wallet thread; messages are taken in the order they were sent. */
export type ToWallets =
    /**
     * Wallets new or changed, as they are now, and each one's position in the repository's order
     * (see repository-order.ts) where it took one, KEEP_POSITION where it did not.
     */
    | { kind: "put"; wallets: TransferredWallet[]; positions: number[] }
    /** Wallets the node no longer has. */
    | { kind: "remove"; addresses: string[] }
    /** Everything is sent again from the start. */
    | { kind: "clear" }
    /** A block came: bring every list kept up to date now. */
    | { kind: "refresh" }
    | { kind: "ask"; id: number; question: WalletQuestion };

export interface WalletThreadState {
    version: number;
    /** The version each list kept has reached. */
    lists: number[];
    changesKept: number;
    /** The wallet thread's heap, in use, and its memory outside the heap (typed arrays), in bytes. */
    heapUsed: number;
    external: number;
}

export interface WalletAnswer {
    page?: { addresses: string[]; wallets?: TransferredWallet[]; totalCount: number };
    /** Instead of the page: how many wallets the thread holds, which is not what the node said. */
    size?: number;
    unknown?: string[];
    state?: WalletThreadState;
    /** The listing failed as core-api's would (values it cannot compare): its message. */
    error?: string;
}

/** From the wallet thread to the node's thread. */
export type FromWallets = { kind: "answer"; id: number } & WalletAnswer;
