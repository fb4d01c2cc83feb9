/**
 * core-api 3.9.1's wallet routes in a process of their own, over a state equal to the wallets
 * bench's (the same seeded wallets, and every block the bench applies, sent before each comparison).
 *
 * Why apart: core-api holds each listing 0.3-2.5 s while it sorts every wallet, so the objects its
 * requests allocate outlive V8's young collections, and V8 then pretenures those allocation sites
 * (Hapi's, joi's, core-api's pagination), which our routes share: afterwards our requests' objects
 * go straight to the old generation of the node's heap and bring its major collections. That is
 * core-api's doing, in whatever process serves its listings; the bench measures the stalls of our
 * routes in a process where core-api's listings are not served, unless
 * BENCH_WALLETS_CORE_API=same-process (as before 2026-11-27 noon).
 */
import "reflect-metadata";

import { fork } from "child_process";
import { AddressInfo } from "net";

import { createWalletState } from "../__tests__/support/wallet-state";
import { nextMessageOf } from "./child-messages";
import { lowerBelowBench } from "./load";
import { applyBlock } from "./wallet-blocks";

type ToHost = { kind: "start"; size: number } | { kind: "blocks"; blocks: number[] };
type FromHost = { kind: "listening"; port: number } | { kind: "applied" };

export interface CoreApiHost {
    url: string;
    /** Applies the blocks it has not yet applied; their effects are additions, so order is free. */
    sync(blocks: readonly number[]): Promise<void>;
    stop(): Promise<void>;
}

/** Starts the host process and builds its state, which takes as long as the bench's own. */
export const startCoreApiHost = (size: number): { ready: Promise<CoreApiHost> } => {
    const child = fork(__filename, [], {
        execArgv: ["--max-old-space-size=8192", "--require", "ts-node/register/transpile-only"],
        stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    // Below the measured process, as the clients are: what it does after its listings (collecting
    // a heap that holds a million wallets and core-api's garbage, on its own helper threads) runs
    // into the window of ours that follows, on the same cores. Its req/s are measured while ours idles.
    lowerBelowBench(child.pid);
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const heard = (kind: FromHost["kind"]): Promise<FromHost> =>
        nextMessageOf<FromHost>(child, kind, "core-api's host");
    const say = (message: ToHost): void => void child.send(message);
    let sent = 0;
    const ready = (async (): Promise<CoreApiHost> => {
        const listening = heard("listening");
        say({ kind: "start", size });
        const { port } = (await listening) as { port: number };
        return {
            url: `http://127.0.0.1:${port}`,
            sync: async (blocks) => {
                if (blocks.length === sent) {
                    return;
                }
                const applied = heard("applied");
                say({ kind: "blocks", blocks: blocks.slice(sent) });
                sent = blocks.length;
                await applied;
            },
            stop: async () => {
                if (child.exitCode === null && child.signalCode === null) {
                    child.kill();
                }
                await exited;
            },
        };
    })();
    return { ready };
};

const host = async (): Promise<void> => {
    // The host ends with its channel: a bench stopped or killed leaves it not running.
    process.on("disconnect", () => process.exit(0));
    const say = (message: FromHost): void => void process.send?.(message);
    const { size } = await new Promise<{ size: number }>((resolve) =>
        process.once("message", (message: ToHost) => resolve(message as { size: number })),
    );
    const state = createWalletState(size);
    const wallets = state.repository.allByAddress();
    const server = await state.coreApiServer();
    await server.start();
    process.on("message", (message: ToHost) => {
        if (message.kind === "blocks") {
            message.blocks.forEach((block) => applyBlock(state, wallets, block));
            say({ kind: "applied" });
        }
    });
    say({ kind: "listening", port: (server.listener.address() as AddressInfo).port });
};

if (require.main === module) {
    void host();
}
