import { ChildProcess } from "child_process";

/** A bench host process's next message of `kind`; fails if the process has ended or ends first. */
export const nextMessageOf = <M extends { kind: string }>(
    child: ChildProcess,
    kind: M["kind"],
    name: string,
): Promise<M> =>
    new Promise((resolve, reject) => {
        const ended = (): void =>
            reject(new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before "${kind}"`));
        if (child.exitCode !== null || child.signalCode !== null) {
            ended();
            return;
        }
        const listener = (message: M): void => {
            if (message.kind === kind) {
                child.off("message", listener);
                child.off("exit", ended);
                resolve(message);
            }
        };
        child.on("message", listener);
        child.once("exit", ended);
    });
