import { ImportCheck, markArkImportDone, readArkWebhooks } from "../store/ark-import";
import { SqliteDatabase } from "../store/database";
import { WebhookRegister } from "./webhook-register";

export interface ArkImportDependencies {
    db: SqliteDatabase;
    register: WebhookRegister;
    /** The create route's own validation. */
    check: ImportCheck;
    log: { info(message: string): void; warning(message: string): void };
}

/**
 * Imports the register of ARK's core-webhooks once, ids and tokens kept; entries the create route
 * would refuse are skipped and logged.
 */
export const importArkRegister = async (file: string, { db, register, check, log }: ArkImportDependencies) => {
    const now = Date.now();
    const found = readArkWebhooks(db, file, now, check);
    if (!found) {
        return;
    }
    const { added, refused } = await register.restore(found.imported, () =>
        markArkImportDone(db, found.imported.length, now),
    );
    log.info(`imported ${added.length} webhooks of @arkecosystem/core-webhooks (${file})`);
    const skipped = [...found.skipped, ...refused.map(({ id, reason }) => `${id}: ${reason}`)];
    for (const reason of skipped) {
        log.warning(`skipped an entry of ${file}: ${reason}`);
    }
};
