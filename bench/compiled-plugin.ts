import { Dirent, existsSync, readdirSync, statSync } from "fs";
import Module from "module";
import { join, relative, sep } from "path";

const ROOT = join(__dirname, "..");
const SOURCE = join(ROOT, "src") + sep;
const COMPILED = join(ROOT, "dist");

type Resolve = (request: string, parent: unknown, isMain: boolean, options: unknown) => string;

let loading = false;

/** Every file under `folder` whose name ends with `extension`, with its last change. */
const filesOf = (folder: string, extension: string): Array<{ file: string; changedMs: number }> =>
    readdirSync(folder, { withFileTypes: true }).flatMap((entry: Dirent) => {
        const path = join(folder, entry.name);
        if (entry.isDirectory()) {
            return filesOf(path, extension);
        }
        return entry.name.endsWith(extension) ? [{ file: path, changedMs: statSync(path).mtimeMs }] : [];
    });

/**
 * Why the compiled plugin in `compiled` cannot stand for the source in `source`, or undefined if
 * it can: it is missing, or a source file changed after it was built. A bench run without it
 * measured the TypeScript source through ts-node, in every thread (the wallet thread compiled its
 * modules during the first listing it was timing); one over an old build measured old code.
 */
export const whyNotCompiled = (source: string, compiled: string): string | undefined => {
    const built = existsSync(compiled) ? filesOf(compiled, ".js") : [];
    if (built.length === 0) {
        return `${compiled} holds no compiled plugin`;
    }
    const builtAt = Math.min(...built.map(({ changedMs }) => changedMs));
    const changed = filesOf(source, ".ts").find(({ changedMs }) => changedMs > builtAt);
    return changed ? `${changed.file} changed after ${compiled} was built` : undefined;
};

/**
 * Makes this process load the plugin's compiled JavaScript (dist/, built by `npm run bench`)
 * wherever a module asks for its TypeScript source, as a node loads the published package: a host
 * process measured beside ARK's compiled plugin must not pay for ts-node, in any of its threads.
 * Without a current build it refuses to run rather than measure something else.
 */
export const loadCompiledPlugin = (): void => {
    if (loading) {
        return; // once per process: the bench's main module and a host module both ask
    }
    const reason = whyNotCompiled(SOURCE, COMPILED);
    if (reason !== undefined) {
        throw new Error(
            `the benches measure the plugin as published, from dist/: ${reason}; run \`npm run build\` first (\`npm run bench\` does)`,
        );
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
