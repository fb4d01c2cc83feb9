import { Types } from "@arkecosystem/core-kernel";
import { Managers } from "@arkecosystem/crypto";
import { existsSync, readFileSync, writeFileSync } from "fs";
import { resolve } from "path";

/**
 * core-test-framework's Sandbox makes a new genesis block (a new premine wallet, a new nethash)
 * at every boot unless it is given one: the first is kept beside the chain it started.
 */
const genesisFile = (dataDir: string): string => resolve(dataDir, "genesis-block.json");

export const keptGenesisBlock = (dataDir: string): Types.JsonObject | undefined =>
    existsSync(genesisFile(dataDir)) ? JSON.parse(readFileSync(genesisFile(dataDir), "utf8")) : undefined;

export const keepGenesisBlock = (dataDir: string): void => {
    if (!existsSync(genesisFile(dataDir))) {
        writeFileSync(genesisFile(dataDir), JSON.stringify(Managers.configManager.get("genesisBlock")), {
            mode: 0o600,
        });
    }
};
