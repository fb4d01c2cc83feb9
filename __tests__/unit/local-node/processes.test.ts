import { createServer, Server } from "net";

import { assertPortsFree, portHolder } from "../../../local-node/processes";

describe("the local node's port check", () => {
    let server: Server;
    let port: number;

    beforeEach(async () => {
        server = createServer();
        await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
        port = (server.address() as { port: number }).port;
    });

    afterEach(async () => {
        await new Promise<void>((done) => server.close(() => done()));
    });

    it("names the process that holds a port", () => {
        expect(portHolder(port)).toEqual({ pid: process.pid, command: expect.stringContaining("node") });
    });

    it("refuses a held port in one line: the port, its use, the holder and what to do", async () => {
        const check = assertPortsFree([{ port, use: "core-api", variable: "LOCAL_NODE_API_PORT" }]);
        await expect(check).rejects.toThrow(
            new RegExp(
                `^port ${port} \\(core-api\\) is in use by pid ${process.pid} \\(.*node.*\\): stop it \\(kill ${process.pid}\\) or choose another port with LOCAL_NODE_API_PORT=<port>$`,
            ),
        );
    });

    it("lets free ports pass", async () => {
        await new Promise<void>((done) => server.close(() => done()));
        await expect(
            assertPortsFree([{ port, use: "core-api", variable: "LOCAL_NODE_API_PORT" }]),
        ).resolves.toBeUndefined();
        await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    });
});
