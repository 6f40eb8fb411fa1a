// The connection's prepared statements, reused by SQL text.
import type Database from 'better-sqlite3';

export type Statement = Database.Statement<unknown[], unknown>;

/** Prepared statements are reused by SQL text; the set of texts is bounded (filters vary only in shape). */
const STATEMENT_CACHE_SIZE = 256;

export class Statements {
  private readonly byText = new Map<string, Statement>();

  constructor(private readonly db: Database.Database) {}

  prepare(sql: string): Statement {
    let statement = this.byText.get(sql);
    if (!statement) {
      if (this.byText.size >= STATEMENT_CACHE_SIZE) this.byText.clear();
      statement = this.db.prepare(sql);
      this.byText.set(sql, statement);
    }
    return statement;
  }

  /** A statement not kept, for one-off SQL (query plans). */
  once(sql: string): Statement {
    return this.db.prepare(sql);
  }

  /** Forgets them all: after a change of tables, or a rollback that undid one. */
  clear(): void {
    this.byText.clear();
  }
}
