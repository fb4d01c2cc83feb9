import { createRequire } from "module";
import { dirname } from "path";

/** Loads a module by the path resolved from the package that depends on it (the same instance it uses). */
const loadModule = createRequire(__filename);

interface SntpModule {
    time(options: { host: string; timeout?: number }): Promise<{ t: number }>;
}

/** core-p2p's DNS check asks these hosts; this machine answers for itself without a network. */
export const LOCAL_DNS_HOSTS = ["127.0.0.1"];

/** Named in core-p2p's "NTP connectivity verified by …" line. */
export const LOCAL_NTP_HOST = "this machine's clock";

/**
 * core-p2p checks the clock against public NTP servers at boot (on a port no ordinary user can
 * serve locally) and logs an ERROR per unreachable host. A single-node local network has no peer
 * whose clock could differ, so the local node answers the check itself, once, with no offset.
 */
export const answerNtpLocally = (info: (line: string) => void): void => {
    const p2pFolder = dirname(require.resolve("@arkecosystem/core-p2p/package.json"));
    const sntp = loadModule(require.resolve("@hapi/sntp", { paths: [p2pFolder] })) as SntpModule;
    sntp.time = async () => {
        info(
            "local node: NTP check answered by this machine's clock (a single-node network has no peers to drift from)",
        );
        return { t: 0 };
    };
};

/**
 * The kernel's error handler listens to "multipleResolves", which Node deprecated (DEP0160): at
 * every stop ARK's shutdown resolves one promise twice and a deprecation warning is printed.
 * Uncaught errors and unhandled rejections stay logged.
 */
export const forgetMultipleResolves = (): void => {
    process.removeAllListeners("multipleResolves");
};
