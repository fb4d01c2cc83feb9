import { SqliteDatabase } from "./database";

/** Whether a one-time import (ARK's register, the move into a shared register) was done in this file. */
export const importDone = (db: SqliteDatabase, source: string): boolean =>
    db.prepare<[string], { source: string }>("SELECT source FROM imports WHERE source = ?").get(source) !== undefined;

export const markImportDone = (db: SqliteDatabase, source: string, count: number, now: number): void => {
    db.prepare("INSERT OR IGNORE INTO imports (source, imported_at, count) VALUES (?, ?, ?)").run(source, now, count);
};

const FOLLOWED = "followed shared register ";

/** The identity of the shared register this file's copy follows, if it followed one that had one. */
export const followedRegister = (db: SqliteDatabase): string | undefined =>
    db
        .prepare<
            [string],
            { source: string }
        >("SELECT source FROM imports WHERE source LIKE ? ORDER BY imported_at DESC LIMIT 1")
        .get(`${FOLLOWED}%`)
        ?.source.slice(FOLLOWED.length);

export const markFollowedRegister = (db: SqliteDatabase, identity: string, now: number): void => {
    db.transaction(() => {
        db.prepare("DELETE FROM imports WHERE source LIKE ?").run(`${FOLLOWED}%`);
        markImportDone(db, `${FOLLOWED}${identity}`, 0, now);
    })();
};
