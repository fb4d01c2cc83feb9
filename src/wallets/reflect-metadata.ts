import { dirname } from "path";

// core-kernel's decorators need the Reflect metadata API, which a node loads before any plugin; a
// thread of the plugin starts without it. It is core-kernel's own dependency: found from there.
// eslint-disable-next-line @typescript-eslint/no-require-imports
require(require.resolve("reflect-metadata", { paths: [dirname(require.resolve("@arkecosystem/core-kernel"))] }));
