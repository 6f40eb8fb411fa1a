// Loads with the declared indexes deferred: a rebuild's bulk load (unsynced, long commit windows,
// marked in the file so that one cut short is dropped at the next open), and a first start filling
// an empty store (synced as usual). Sorting every row once at the end costs less than inserting each
// into every index's B-tree as it comes.
import { availableParallelism } from 'node:os';
import type Database from 'better-sqlite3';
import type { Filter } from '../readStore';
import type { Commits } from './commits';
import type { ReadCaches } from './readCaches';
import type { Statements } from './statements';
import type { IndexDeferral, Tables } from './tableLayout';
import { indexName, keyTable, quote } from './tableNames';

/** The file's user_version while a bulk load is under way (dropAllForBulkLoad). */
export const BULK_LOADING = 1;
/** The file's user_version while a first start fills an empty store with its indexes deferred (deferIndexesWhileEmpty). */
const INDEXES_DEFERRED = 2;
/** The page cache during a bulk load, in KiB: the B-trees being filled stay in memory (SQLite's default is 2 MB). */
const BULK_LOAD_CACHE_KIB = 65_536;

/** Declared indexes waiting for the end of a load: those deferred, and those built early for a query. */
interface Load {
  deferred: Set<string>;
  indexed: Set<string>;
  /** A rebuild's load (dropAllForBulkLoad): unsynced, marked, long commit windows. */
  unsynced: boolean;
}

/** The load under way in this connection, if any, and the mark another process's leaves in the file. */
export class LoadState implements IndexDeferral {
  current: Load | undefined;

  constructor(private readonly db: Database.Database) {}

  /** The file's mark (user_version): BULK_LOADING, INDEXES_DEFERRED, or 0. */
  marked(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  get unsynced(): boolean {
    return this.current?.unsynced ?? false;
  }

  defersIndexesOf(name: string): boolean {
    // Another process defers them (a first start filling the store): it builds them at its end.
    return this.current ? !this.current.indexed.has(name) : this.marked() === INDEXES_DEFERRED;
  }

  deferred(name: string): void {
    this.current?.deferred.add(name);
  }
}

export class BulkLoad {
  constructor(
    private readonly db: Database.Database,
    private readonly state: LoadState,
    private readonly tables: Tables,
    private readonly commits: Commits,
    private readonly statements: Statements,
    private readonly caches: ReadCaches,
  ) {}

  /**
   * Drops every collection and starts a bulk load into the empty store, for a rebuild that holds
   * the data folder's exclusive lock (no other connection reads or writes meanwhile): writes are
   * not synced to disk, commits are grouped in long windows, and each collection's declared indexes
   * are built once its rows are in (see deferIndexesWhileEmpty). A load cut short (a crash, a power
   * cut) leaves a mark that makes the next open drop the read models: they are rebuilt from the log.
   */
  dropAllForBulkLoad(): void {
    this.commits.commitGroup();
    // The mark is on disk before the first write that is not.
    this.db.pragma('user_version = ' + String(BULK_LOADING));
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    this.db.pragma('synchronous = OFF');
    this.db.pragma(`cache_size = ${BULK_LOAD_CACHE_KIB * -1}`);
    // The index builds at the end sort on the other cores too (by then the rebuild's other thread is done).
    this.db.pragma(`threads = ${Math.max(0, availableParallelism() - 1)}`);
    this.state.current = { deferred: new Set(), indexed: new Set(), unsynced: true };
    this.tables.dropEverything();
  }

  /**
   * For a first start on an empty store (no checkpoint, no document): the declared indexes wait
   * until buildDeferredIndexes, or a collection's first query on other fields than `_id`, which
   * then runs on them. Sorting every row once costs less than inserting each into five B-trees.
   * Unlike a rebuild's load, writes stay synced and commit as usual. The file is marked meanwhile:
   * other processes on it (split roles) build no index either, rather than hold the write lock for
   * seconds while the rows come; a start cut short (stopped, or a crash) leaves the mark, and the
   * next start that calls this resumes the deferral (answering true) and builds what is missing at
   * its end. Answers whether the indexes wait.
   */
  deferIndexesWhileEmpty(): boolean {
    // Deferring already (a start stopped before it caught up): still so. A rebuild's load ends otherwise.
    if (this.state.current) return !this.state.current.unsynced;
    this.commits.commitGroup();
    const deferred = this.commits.transaction(() => {
      if (this.state.marked() === INDEXES_DEFERRED) return true;
      if (this.db.prepare('SELECT 1 FROM checkpoints LIMIT 1').get() !== undefined) return false;
      const tables = this.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'c:%'`).pluck().all() as string[];
      for (const table of tables) if (this.db.prepare(`SELECT 1 FROM ${quote(table)} LIMIT 1`).get() !== undefined) return false;
      // Only the declared ones: the unique id, the irregular rows' and the array keys' stay.
      const declared = new Set(tables.flatMap((table) => this.tables.layout(table.slice(2)).scalarIndexes.map((d) => indexName(table, d))));
      const indexes = this.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name LIKE 'c:%'`).pluck().all() as string[];
      for (const index of indexes) if (declared.has(index)) this.db.exec(`DROP INDEX ${quote(index)}`);
      this.db.pragma(`user_version = ${INDEXES_DEFERRED}`);
      return true;
    }, { group: false });
    if (!deferred) return false;
    this.statements.clear();
    this.tables.forget();
    this.db.pragma(`cache_size = ${BULK_LOAD_CACHE_KIB * -1}`);
    this.state.current = { deferred: new Set(), indexed: new Set(), unsynced: false };
    // Every declared collection waits, those this start never writes too.
    this.tables.ensureDeclared();
    return true;
  }

  /** Builds the indexes deferIndexesWhileEmpty deferred, and clears the file's mark (a rebuild's load ends with endBulkLoad). */
  buildDeferredIndexes(): void {
    const bulk = this.state.current;
    if (!bulk || bulk.unsynced) return;
    // The mark goes first, or ensure() would take these indexes for another's to build; a build cut
    // short leaves indexes missing, which the next open makes.
    this.commits.commitGroup();
    this.db.pragma('user_version = 0');
    this.buildDeferred(bulk);
    this.db.pragma('cache_size = -2000');
  }

  private buildDeferred(bulk: Load): void {
    this.commits.commitGroup();
    this.state.current = undefined;
    for (const name of bulk.deferred) this.tables.ensureAgain(name);
  }

  /** Ends the bulk load: builds the deferred indexes, and syncs everything to disk before clearing the mark. */
  endBulkLoad(): void {
    const bulk = this.state.current;
    if (!bulk) return;
    this.buildDeferred(bulk);
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('cache_size = -2000');
    this.db.pragma('threads = 0');
    this.db.pragma('user_version = 0');
    // Copies the log of writes into the file, syncing both first: only then is the mark gone on disk.
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  /**
   * During a rebuild's bulk load: copies into this store the rows of `collections` and the
   * `checkpoints` from another file loaded apart (service/rebuildPart.ts, on another core). This
   * store's copies of those collections must be empty: the projections that write them ran there only.
   */
  absorb(file: string, collections: readonly string[], checkpoints: readonly string[]): void {
    if (!this.state.unsynced) throw new Error('absorb is for a rebuild\'s bulk load');
    this.commits.commitGroup();
    this.db.prepare('ATTACH DATABASE ? AS part').run(file);
    try {
      this.db.transaction(() => {
        for (const name of collections) {
          const table = this.tables.ensure(name);
          const tables = [table, ...(this.tables.layout(name).arrayPaths.size > 0 ? [keyTable(name)] : [])];
          for (const t of tables) {
            // A collection the part never wrote (an empty log) has no table there: nothing to copy.
            if (this.db.prepare(`SELECT 1 FROM part.sqlite_master WHERE type = 'table' AND name = ?`).get(t) === undefined) continue;
            if (this.db.prepare(`SELECT 1 FROM ${quote(t)} LIMIT 1`).get() !== undefined) throw new Error(`${t} is not empty: it cannot take the rows loaded apart`);
            const columns = (this.db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(t) as string[]).map(quote).join(', ');
            this.db.exec(`INSERT INTO main.${quote(t)} (${columns}) SELECT ${columns} FROM part.${quote(t)}`);
          }
          this.caches.written(table);
        }
        const copy = this.db.prepare('INSERT INTO main.checkpoints (name, position, store) SELECT name, position, store FROM part.checkpoints WHERE name = ? ON CONFLICT (name) DO UPDATE SET position = excluded.position, store = excluded.store');
        for (const name of checkpoints) copy.run(name);
      })();
    } finally {
      this.db.exec('DETACH DATABASE part');
    }
  }

  /** Before a query on other fields than `_id`, or sorted, during a bulk load: the collection's indexes are built now. */
  indexBeforeQuery(name: string, filter: Filter, sort?: Record<string, 1 | -1>): void {
    const bulk = this.state.current;
    if (!bulk || !bulk.deferred.has(name)) return;
    if (Object.keys(filter).every((key) => key === '_id') && Object.keys(sort ?? {}).length === 0) return;
    bulk.deferred.delete(name);
    bulk.indexed.add(name);
    this.tables.ensureAgain(name);
  }
}
