import { version } from "../../package.json";
import { eventually, requestJson } from "../support/http";
import { RunningNode, startNodeProcess } from "./support/local-node-process";

interface ServiceInfo {
    data: { name: string; version: string; listener: { byEvent: Record<string, number> } };
}

describe("the plugin inside a real ARK Core 3.9.1 node", () => {
    let node: RunningNode;

    beforeAll(async () => {
        node = await startNodeProcess();
    });

    afterAll(async () => {
        await node?.stop();
    });

    it("answers on its own port with its name and version", async () => {
        const response = await requestJson<ServiceInfo>(node.pluginUrl);

        expect(response.status).toBe(200);
        expect(response.body.data.name).toBe("core-wallet-webhooks");
        expect(response.body.data.version).toBe(version);
    });

    it("serves the same routes under /api/v2", async () => {
        const response = await requestJson<ServiceInfo>(node.pluginUrl.replace(/\/api$/, "/api/v2"));

        expect(response.status).toBe(200);
        expect(response.body.data.name).toBe("core-wallet-webhooks");
    });

    it("receives block.applied events from the node's forger", async () => {
        const applied = await eventually(async () => {
            const { body } = await requestJson<ServiceInfo>(node.pluginUrl);
            const count = body.data.listener.byEvent["block.applied"] ?? 0;
            return count >= 2 ? count : undefined;
        });

        expect(applied).toBeGreaterThanOrEqual(2);
        const height = await requestJson<{ data: { block: { height: number } } }>(`${node.apiUrl}/blockchain`);
        expect(height.body.data.block.height).toBeGreaterThanOrEqual(3);
    });
});
