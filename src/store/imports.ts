import { SqliteDatabase } from "./database";

/** Whether a one-time import (ARK's register, the move into a shared register) was done in this file. */
export const importDone = (db: SqliteDatabase, source: string): boolean =>
    db.prepare<[string], { source: string }>("SELECT source FROM imports WHERE source = ?").get(source) !== undefined;

export const markImportDone = (db: SqliteDatabase, source: string, count: number, now: number): void => {
    db.prepare("INSERT OR IGNORE INTO imports (source, imported_at, count) VALUES (?, ?, ?)").run(source, now, count);
};
