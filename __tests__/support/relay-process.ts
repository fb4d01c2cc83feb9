/**
 * One relay of several on a shared PostgreSQL, in a process of its own, for tests and the bench
 * that kill it with SIGKILL. argv: <dir> <postgres url, or "sqlite" for a relay on its own file>
 * <relay name>. Prints READY <url>, then
 * reads commands on stdin, a line each:
 *   FEED <event> <from> <to> <interval ms>  feeds events with ids <event>-<n>, prints FED <to>
 *   STOP                                    stops the plugin cleanly and exits
 */
import { createInterface } from "readline";

import { startPlugin } from "./plugin-harness";

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

const main = async (): Promise<void> => {
    const [dir, url, relayName] = process.argv.slice(2);
    const running = await startPlugin(
        {
            // A lease of 5 s: a killed relay's deliveries are taken over within seconds, while a living relay
            // stalled by a loaded machine (a slow fsync, a starved thread) still records its outcomes in time.
            storage:
                url === "sqlite"
                    ? { driver: "sqlite" }
                    : { driver: "postgres", postgres: { url, relayName, leaseMs: 5_000, connectionTimeoutMs: 2_000 } },
            delivery: { timeoutMs: 1_000, retryScheduleSeconds: [1, 1, 1] },
        },
        { dir },
    );
    console.log(`READY ${running.url}`);
    const commands = createInterface({ input: process.stdin });
    for await (const command of commands) {
        const [word, event, from, to, interval] = command.trim().split(" ");
        if (word === "FEED") {
            for (let n = Number(from); n <= Number(to); n++) {
                running.plugin.listener.handle({ name: event, data: { id: `${event}-${n}`, height: n } });
                if (Number(interval) > 0) {
                    await sleep(Number(interval));
                }
            }
            console.log(`FED ${to}`);
        } else if (word === "STOP") {
            await running.stop();
            process.exit(0);
        }
    }
};

void main();
