// What this connection remembers of its tables between reads: the answers kept (queryCache.ts) and
// which tables hold rows SQL cannot compare exactly. Its own writes forget what they touch; another
// connection's commits (SQLite's data_version tells) forget everything.
import { QueryCache } from '../queryCache';
import type { Statements } from './statements';
import { quote } from './tableNames';

export class ReadCaches {
  readonly answers = new QueryCache();
  private readonly irregular = new Map<string, boolean>();
  private seenVersion: number | undefined;
  private othersLookedAt = false;

  constructor(private readonly statements: Statements) {}

  /**
   * Whether the table holds rows SQL cannot compare exactly. Remembered until this connection writes
   * the table or another connection commits, since reads ask each time.
   */
  hasIrregular(table: string): boolean {
    this.forgetOthersChanges();
    let known = this.irregular.get(table);
    if (known === undefined) {
      known = this.statements.prepare(`SELECT 1 FROM ${quote(table)} WHERE plain = 0 LIMIT 1`).get() !== undefined;
      this.irregular.set(table, known);
    }
    return known;
  }

  /** What this connection remembers of the tables goes when another connection commits. */
  forgetOthersChanges(): void {
    // Once per turn of the event loop: a request's several reads share one look (it was a tenth of a
    // project-information call). What another process commits meanwhile shows from the next turn, as
    // it would had the reads come a moment earlier; this connection's own writes clear what they touch.
    if (this.othersLookedAt) return;
    this.othersLookedAt = true;
    setImmediate(() => (this.othersLookedAt = false));
    const version = this.statements.prepare('PRAGMA data_version').pluck().get() as number;
    if (version === this.seenVersion) return;
    this.clear();
    this.seenVersion = version;
  }

  /** Looks for another connection's commits now, even if it looked this turn already. */
  lookAgain(): void {
    this.othersLookedAt = false;
    this.forgetOthersChanges();
  }

  /** Moves on with every write through this connection (each drops cached answers) and every commit of another. */
  changeMark(): number {
    this.forgetOthersChanges();
    return this.answers.generation;
  }

  /** This connection wrote the table (rows added, changed or removed). */
  written(table: string): void {
    this.irregular.delete(table);
    this.answers.clearTable(table);
  }

  clear(): void {
    this.irregular.clear();
    this.answers.clear();
  }
}
