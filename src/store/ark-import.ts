import { existsSync, readFileSync } from "fs";

import { Condition, Webhook } from "../contracts";
import { SqliteDatabase } from "./database";

interface ArkWebhook {
    id?: unknown;
    event?: unknown;
    target?: unknown;
    token?: unknown;
    enabled?: unknown;
    conditions?: unknown;
}

/** Checks an imported webhook's fields as the create route would; returns why it is refused. */
export type ImportCheck = (input: Pick<Webhook, "event" | "target" | "enabled" | "conditions">) => string | undefined;

export interface ArkImportResult {
    imported: Webhook[];
    skipped: string[];
}

const SOURCE = "@arkecosystem/core-webhooks";

const toWebhook = (entry: ArkWebhook, now: number): Webhook | string => {
    const { id, event, target, token, enabled, conditions } = entry;
    if (typeof id !== "string" || typeof event !== "string" || typeof target !== "string") {
        return `an entry without id, event or target (${JSON.stringify(entry).slice(0, 80)})`;
    }
    if (typeof token !== "string" || !/^[0-9a-f]+$/i.test(token)) {
        return `${id}: its token is not hex`;
    }
    return {
        id,
        event,
        target,
        // ARK stored only the token's first 32 characters; that is what its receivers compare against.
        token: token.toLowerCase(),
        enabled: enabled === true || enabled === "true",
        conditions: Array.isArray(conditions) ? (conditions as Condition[]) : [],
        match: "any",
        createdAt: now,
        updatedAt: now,
    };
};

/**
 * Reads the register of ARK's core-webhooks (`<cache path>/webhooks.json`), once: the import is
 * recorded in the database and never repeated, even if the file stays.
 */
export const readArkWebhooks = (
    db: SqliteDatabase,
    file: string,
    now: number,
    check: ImportCheck,
): ArkImportResult | undefined => {
    const done = db.prepare<[string], { source: string }>("SELECT source FROM imports WHERE source = ?").get(SOURCE);
    if (done || !existsSync(file)) {
        return undefined;
    }
    const parsed = JSON.parse(readFileSync(file, "utf8")) as { webhooks?: unknown };
    const entries = Array.isArray(parsed.webhooks) ? (parsed.webhooks as ArkWebhook[]) : [];
    const imported: Webhook[] = [];
    const skipped: string[] = [];
    for (const entry of entries) {
        const webhook = toWebhook(entry ?? {}, now);
        const refusal = typeof webhook === "string" ? webhook : check(webhook);
        if (refusal !== undefined) {
            skipped.push(typeof webhook === "string" ? refusal : `${webhook.id}: ${refusal}`);
        } else if (typeof webhook !== "string") {
            imported.push(webhook);
        }
    }
    return { imported, skipped };
};

export const markArkImportDone = (db: SqliteDatabase, count: number, now: number): void => {
    db.prepare("INSERT OR IGNORE INTO imports (source, imported_at, count) VALUES (?, ?, ?)").run(SOURCE, now, count);
};
