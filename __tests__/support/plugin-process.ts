/**
 * The plugin in a process of its own, for tests that kill it with SIGKILL.
 * argv: <dir> [<target> <events>]: with a target, it creates a webhook to it and queues that many
 * block.applied deliveries (the target is down), then prints QUEUED and waits to be killed.
 */
import { startPlugin } from "./plugin-harness";

const main = async (): Promise<void> => {
    const [dir, target, events] = process.argv.slice(2);
    const running = await startPlugin({ delivery: { retryScheduleSeconds: [3600] } }, { dir });
    if (!target) {
        console.log(`READY ${running.url}`);
        return;
    }
    const webhook = await running.plugin.register.create({
        event: "block.applied",
        target,
        enabled: true,
        conditions: [],
        match: "any",
    });
    for (let height = 1; height <= Number(events); height++) {
        running.plugin.listener.handle({ name: "block.applied", data: { height } });
    }
    console.log(`QUEUED ${webhook.id}`);
};

void main();
