import { ConsoleLogger } from "../../../local-node/console-logger";

const logged = (options: { level: "debug" | "info" | "warning"; quiet: boolean }): string[] => {
    const lines: string[] = [];
    const logger = new ConsoleLogger({
        ...options,
        pluginName: "core-wallet-webhooks",
        write: (line) => lines.push(line),
    });
    logger.debug("node debug");
    logger.info("node info");
    logger.warning("node warning");
    logger.error("node error");
    logger.info("core-wallet-webhooks listening");
    logger.warning("core-wallet-webhooks storage degraded");
    logger.error("core-wallet-webhooks cannot write");
    return lines.map((line) => line.replace(/^\[[\d:.]+\] /, ""));
};

describe("the local node's console logger", () => {
    it("prints info and above by default, each line with its level", () => {
        expect(logged({ level: "info", quiet: false })).toEqual([
            "INFO      node info",
            "WARNING   node warning",
            "ERROR     node error",
            "INFO      core-wallet-webhooks listening",
            "WARNING   core-wallet-webhooks storage degraded",
            "ERROR     core-wallet-webhooks cannot write",
        ]);
    });

    it("prints debug when asked", () => {
        expect(logged({ level: "debug", quiet: false })[0]).toBe("DEBUG     node debug");
    });

    it("prints only the plugin's own warnings and errors when quiet", () => {
        expect(logged({ level: "debug", quiet: true })).toEqual([
            "WARNING   core-wallet-webhooks storage degraded",
            "ERROR     core-wallet-webhooks cannot write",
        ]);
    });
});
