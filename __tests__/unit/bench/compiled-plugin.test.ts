import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";

import { whyNotCompiled } from "../../../bench/compiled-plugin";

describe("the compiled plugin the benches measure", () => {
    let root: string;
    const source = (): string => join(root, "src");
    const compiled = (): string => join(root, "dist");
    /** Writes `file` under `folder`, last changed `secondsAgo`. */
    const write = (folder: string, file: string, secondsAgo: number): void => {
        const path = join(folder, file);
        mkdirSync(join(path, ".."), { recursive: true });
        writeFileSync(path, "");
        const at = Date.now() / 1000 - secondsAgo;
        utimesSync(path, at, at);
    };

    beforeEach(() => {
        root = mkdtempSync(join(tmpdir(), "cww-compiled-"));
        write(source(), "index.ts", 60);
        write(source(), "wallets/wallet-thread.ts", 60);
    });

    afterEach(() => rmSync(root, { recursive: true, force: true }));

    it("is refused when it was never built", () => {
        expect(whyNotCompiled(source(), compiled())).toBe(`${compiled()} holds no compiled plugin`);

        mkdirSync(compiled());
        expect(whyNotCompiled(source(), compiled())).toBe(`${compiled()} holds no compiled plugin`);
    });

    it("is taken when built after every source file changed", () => {
        write(compiled(), "index.js", 30);
        write(compiled(), "wallets/wallet-thread.js", 30);

        expect(whyNotCompiled(source(), compiled())).toBeUndefined();
    });

    it("is refused when a source file, however deep, changed after the build", () => {
        write(compiled(), "index.js", 30);
        write(compiled(), "wallets/wallet-thread.js", 30);
        write(source(), "wallets/wallet-thread.ts", 10);

        expect(whyNotCompiled(source(), compiled())).toBe(
            `${join(source(), "wallets/wallet-thread.ts")} changed after ${compiled()} was built`,
        );
    });
});
