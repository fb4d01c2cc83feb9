import { SqliteDatabase } from "./database";

/** Where a Retry-After pause of a receiver's origin is kept, so that a restart keeps it too. */
export interface PauseKeeper {
    kept(origin: string, until: number): void;
    ended(origin: string): void;
}

/** The origins' pauses in the SQLite file (written by the delivery engine, rarely: once per pause). */
export class OriginPauses implements PauseKeeper {
    private readonly statements;

    public constructor(db: SqliteDatabase) {
        this.statements = {
            keep: db.prepare<[string, number]>(
                "INSERT INTO origin_pauses (origin, until) VALUES (?, ?) ON CONFLICT (origin) DO UPDATE SET until = excluded.until",
            ),
            end: db.prepare<[string]>("DELETE FROM origin_pauses WHERE origin = ?"),
            endedBefore: db.prepare<[number]>("DELETE FROM origin_pauses WHERE until <= ?"),
            all: db.prepare<[], { origin: string; until: number }>("SELECT origin, until FROM origin_pauses"),
        };
    }

    /** The pauses still running at `now`; those over are forgotten. */
    public running(now: number): Array<{ origin: string; until: number }> {
        this.statements.endedBefore.run(now);
        return this.statements.all.all();
    }

    public kept(origin: string, until: number): void {
        this.statements.keep.run(origin, until);
    }

    public ended(origin: string): void {
        this.statements.end.run(origin);
    }
}
