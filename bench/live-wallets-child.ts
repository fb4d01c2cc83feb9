// One size of the live-wallets bench, in a process of its own (see live-wallets.ts).
import { loadCompiledPlugin } from "./compiled-plugin";
loadCompiledPlugin();

import { benchSize, ROWS_MARKER } from "./live-wallets";

benchSize(Number(process.argv[2])).then(
    (rows) => {
        console.log(`${ROWS_MARKER}${JSON.stringify(rows)}`);
        process.exit(0);
    },
    (error: unknown) => {
        console.error(error);
        process.exit(1);
    },
);
