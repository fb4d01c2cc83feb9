import { createInterface } from "readline";

import { Container, Contracts } from "@arkecosystem/core-kernel";

import { LocalNode } from "./index";

/** The line that answers a control, followed by its JSON. */
export const CONTROL_MARKER = "LOCAL_NODE_CONTROL";

/** What a test can ask of its node, one JSON line on the node's standard input at a time. */
export type Control = { removeBlocks: number };

/**
 * Tests drive their node with these: `{"removeBlocks": n}` reverts the last n blocks as fork
 * recovery does (core-blockchain's removeBlocks: `transaction.reverted` for each transaction, then
 * `block.reverted`), and answers with the height after it. Only with LOCAL_NODE_CONTROL=stdin.
 */
export const followControls = (node: LocalNode): void => {
    const blockchain = node.sandbox.app.get<Contracts.Blockchain.Blockchain>(Container.Identifiers.BlockchainService);
    const answer = (reply: Record<string, unknown>): void => console.log(`${CONTROL_MARKER} ${JSON.stringify(reply)}`);
    createInterface({ input: process.stdin }).on("line", (line) => {
        let control: Control;
        try {
            control = JSON.parse(line) as Control;
        } catch {
            return answer({ error: `not JSON: ${line}` });
        }
        const count = control.removeBlocks;
        if (!Number.isInteger(count) || count < 1) {
            return answer({ error: `removeBlocks takes a whole number of blocks: ${line}` });
        }
        blockchain.removeBlocks(count).then(
            () => answer({ height: node.height() }),
            (error: unknown) => answer({ error: error instanceof Error ? error.message : String(error) }),
        );
    });
};
