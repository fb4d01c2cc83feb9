// A plugin thread's first code, shipped as it is (no compilation, nothing loaded before it): it
// lowers the thread's priority, then loads the thread's modules. process.argv: node, this file,
// the niceness, the modules. On Linux setpriority(0) sets the calling thread's nice value only;
// raising it needs no privilege; 19 is the most there is. Where a module is TypeScript (tests,
// benchmarks), ts-node's hook loads after the lowering: lowered by a TypeScript script of its own,
// the wallet thread loaded ts-node and TypeScript's compiler at the node's priority first, and the
// node's thread waited for the CPU it took (12-18 ms stalls).
"use strict";

const os = require("os");

const [niceness, ...scripts] = process.argv.slice(2);
try {
    os.setPriority(0, Math.min(19, os.getPriority(0) + Number(niceness)));
} catch {
    // Runs at the node's priority, as it would without the option.
}
for (const script of scripts) {
    require(script);
}
