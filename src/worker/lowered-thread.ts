import { getPriority, setPriority } from "os";

// The first script of a thread that runs below the node's (see spawn.ts): argv ends with the
// thread's own script and how many steps of nice lower it runs. On Linux setpriority(0) sets the
// calling thread's nice value only; raising it needs no privilege; 19 is the most there is.
const [script, niceness] = process.argv.slice(-2);
try {
    setPriority(0, Math.min(19, getPriority(0) + Number(niceness)));
} catch {
    // Runs at the node's priority, as it would without the option.
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
require(script);
