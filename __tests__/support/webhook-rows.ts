import { randomUUID } from "crypto";

import { StoreConnections } from "../../src/store/database";

/** A webhook row on block.applied, written straight into the register's table; returns its id. */
export const addWebhookRow = (store: StoreConnections, id = randomUUID()): string => {
    store.register
        .prepare(
            `INSERT INTO webhooks (id, event, target, enabled, conditions, match, token, created_at, updated_at)
             VALUES (?, 'block.applied', 'http://127.0.0.1:9/hook', 1, '[]', 'any', 'token', 0, 0)`,
        )
        .run(id);
    return id;
};
