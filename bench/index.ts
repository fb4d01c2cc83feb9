// Every bench measures the plugin as a node loads the published package: its compiled JavaScript
// (dist/, which `npm run bench` builds first), in this process and in each of its threads.
import { loadCompiledPlugin } from "./compiled-plugin";
loadCompiledPlugin();

import { benchCluster, benchClusterThroughput } from "./cluster";
import { benchCost } from "./cost";
import { benchChangeOfPace, benchDelivery } from "./delivery";
import { benchListener, benchListenerScale } from "./listener";
import { benchLiveWallets } from "./live-wallets";
import { benchFanOut, benchRates } from "./rates";
import { benchRegexp } from "./regexp";
import { benchRegister, benchRegisterStall } from "./register";
import { benchWallets } from "./wallets";

/** Sections that another runs too: `cluster` runs `cluster-throughput`, `delivery` runs `rates` (with `fan-out`) and `pace`, `listener` runs `listener-scale`, `register` runs `register-stall`. */
const PARTS_OF_OTHERS = new Set(["cluster-throughput", "rates", "fan-out", "pace", "listener-scale", "register-stall"]);

/** `npm run bench`: every benchmark, each side by side with ARK's own plugin, in one run. */
const main = async (): Promise<void> => {
    const only = process.argv[2];
    const sections: Array<[string, () => Promise<string[]>]> = [
        ["register", async () => [...(await benchRegister()), "", ...(await benchRegisterStall())]],
        ["register-stall", benchRegisterStall],
        ["cluster", benchCluster],
        ["cluster-throughput", benchClusterThroughput],
        ["listener", async () => [...(await benchListener()), "", ...(await benchListenerScale())]],
        ["listener-scale", benchListenerScale],
        ["delivery", async () => [...(await benchRates()), "", ...(await benchDelivery())]],
        ["rates", benchRates],
        ["fan-out", benchFanOut],
        ["pace", benchChangeOfPace],
        ["cost", benchCost],
        ["regexp", benchRegexp],
        ["wallets", benchWallets],
        ["live-wallets", benchLiveWallets],
    ];
    for (const [name, run] of sections) {
        // Parts of another section run alone only when named.
        if ((only && only !== name) || (!only && PARTS_OF_OTHERS.has(name))) {
            continue;
        }
        const rows = await run();
        console.log(`\n## ${name}\n\n${rows.join("\n")}\n`);
    }
    process.exit(0);
};

main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
});
