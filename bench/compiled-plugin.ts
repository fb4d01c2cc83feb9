import { existsSync } from "fs";
import Module from "module";
import { join, relative, sep } from "path";

const ROOT = join(__dirname, "..");
const SOURCE = join(ROOT, "src") + sep;
const COMPILED = join(ROOT, "dist");

type Resolve = (request: string, parent: unknown, isMain: boolean, options: unknown) => string;

let loading = false;

/**
 * Makes this process load the plugin's compiled JavaScript (dist/, built by `npm run bench`)
 * wherever a module asks for its TypeScript source, as a node loads the published package: a host
 * process measured beside ARK's compiled plugin must not pay for ts-node, in any of its threads.
 */
export const loadCompiledPlugin = (): void => {
    if (loading) {
        return; // once per process: the bench's main module and a host module both ask
    }
    loading = true;
    const moduleWithResolver = Module as unknown as { _resolveFilename: Resolve };
    const resolve = moduleWithResolver._resolveFilename;
    moduleWithResolver._resolveFilename = (request, parent, isMain, options) => {
        const file = resolve(request, parent, isMain, options);
        if (file.startsWith(SOURCE) && file.endsWith(".ts")) {
            const compiled = join(COMPILED, relative(SOURCE, file)).replace(/\.ts$/, ".js");
            if (existsSync(compiled)) {
                return compiled;
            }
        }
        return file;
    };
};
