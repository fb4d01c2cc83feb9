import { Contracts } from "@arkecosystem/core-kernel";
import { inspect } from "util";

export const LOG_LEVELS = ["emergency", "alert", "critical", "error", "warning", "notice", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const isLogLevel = (value: string): value is LogLevel => (LOG_LEVELS as readonly string[]).includes(value);

export interface ConsoleLoggerOptions {
    /** The least severe level printed. */
    level: LogLevel;
    /** Print only this plugin's warnings and errors (lines starting with its name). */
    quiet: boolean;
    pluginName: string;
    write?: (line: string) => void;
}

const rank = (level: LogLevel): number => LOG_LEVELS.indexOf(level);

const asText = (message: unknown): string => (typeof message === "string" ? message : inspect(message, { depth: 1 }));

/**
 * The local node's log service. The kernel's fallback logger prints every level (and writes the
 * month where the minute belongs); this one honours a level and a quiet mode.
 */
export class ConsoleLogger implements Contracts.Kernel.Logger {
    private silent = false;
    private readonly write: (line: string) => void;

    public constructor(private readonly options: ConsoleLoggerOptions) {
        this.write = options.write ?? ((line) => process.stdout.write(`${line}\n`));
    }

    public async make(): Promise<Contracts.Kernel.Logger> {
        return this;
    }

    public emergency(message: unknown): void {
        this.log("emergency", message);
    }

    public alert(message: unknown): void {
        this.log("alert", message);
    }

    public critical(message: unknown): void {
        this.log("critical", message);
    }

    public error(message: unknown): void {
        this.log("error", message);
    }

    public warning(message: unknown): void {
        this.log("warning", message);
    }

    public notice(message: unknown): void {
        this.log("notice", message);
    }

    public info(message: unknown): void {
        this.log("info", message);
    }

    public debug(message: unknown): void {
        this.log("debug", message);
    }

    public suppressConsoleOutput(suppress: boolean): void {
        this.silent = suppress;
    }

    public async dispose(): Promise<void> {
        // Nothing is buffered.
    }

    public shows(level: LogLevel, text: string): boolean {
        if (this.options.quiet) {
            return rank(level) <= rank("warning") && text.startsWith(this.options.pluginName);
        }
        return rank(level) <= rank(this.options.level);
    }

    private log(level: LogLevel, message: unknown): void {
        const text = asText(message);
        if (this.silent || text.length === 0 || !this.shows(level, text)) {
            return;
        }
        const time = new Date().toISOString().slice(11, 23);
        this.write(`[${time}] ${level.toUpperCase().padEnd(9)} ${text}`);
    }
}
