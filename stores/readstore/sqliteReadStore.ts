// The embedded read store: read models on disk in one SQLite file (WAL), one table per collection
// holding each document as JSON, the checkpoints in a table of the same file. The process holds no
// documents beyond a bounded cache of recent answers (queryCache.ts), so memory does not grow with
// the data. Writes may be grouped into one commit per short window (groupCommitMs).
//
// Answers must be the memory store's (mingo's). The part of a filter on declared index fields is
// translated into SQL on the rows' key columns (one per declared field, written with the row, and
// indexed as declared); mingo evaluates the whole filter on what SQL returns.
// When SQL evaluates the filter exactly, sorting, paging and counting are left to SQL too. SQL is
// exact on a field only when the field holds a scalar: each row records whether every declared
// index field of its document does (`plain`), and a collection with rows that do not is queried
// in two parts (plain rows through the indexes, the others wholly by mingo).
//
// Scalars are ordered as MongoDB orders them (null < numbers < strings < booleans): the index key of
// a boolean is a one-byte blob, which SQLite orders after text. Arrays declared as such
// (`array: true`) keep their elements in a side table, so "documents whose array holds v" is a lookup.
//
// The work is split by job under sqlite/: documentJson.ts and indexKeys.ts (documents as rows),
// filterSql.ts (filters as SQL), rowLayout.ts and tableLayout.ts (tables, indexes, relayout),
// rowWrites.ts, queries.ts and cachedReads.ts (writes and reads), walks.ts (long results),
// bulkLoad.ts (deferred indexes), commits.ts and checkpoints.ts (group commit, durability).
// This class opens the file and composes them.
import Database from 'better-sqlite3';
import { assertCollectionName } from './documents/collectionNames';
import { assertIndexDeclarations, type ReadModelIndexes } from './indexDeclarations';
import type { Checkpoint, CheckpointWrite, Collection, CommitLostListener, Document, Filter, FindOptions, ReadStore, WriteOp } from './readStore';
import { zeroWhatIsDeleted } from '../sqliteErasure';
import { BULK_LOADING, BulkLoad, LoadState } from './sqlite/bulkLoad';
import { CachedReads } from './sqlite/cachedReads';
import { checkpointsIn, readCheckpoint, writeCheckpoint } from './sqlite/checkpoints';
import { Commits, ReadModelsWriteError } from './sqlite/commits';
import { decode } from './sqlite/documentJson';
import { Queries } from './sqlite/queries';
import { ReadCaches } from './sqlite/readCaches';
import { RowWrites } from './sqlite/rowWrites';
import { SqliteCollection } from './sqlite/sqliteCollection';
import { Statements } from './sqlite/statements';
import { createStoreTables, Tables } from './sqlite/tableLayout';
import { rowPages, WalksApart } from './sqlite/walks';

export { ReadModelsWriteError };

/** How long a write waits for another connection's lock. */
const BUSY_TIMEOUT_MS = 5000;
/**
 * Rows a caller's walk reads on the store's own connection before it goes on apart
 * (walks.ts, WalksApart): a short walk stays as quick as it was, a long one holds the event loop
 * for no more than these.
 */
const WALK_HERE_ROWS = 1000;
/** How long a walk apart works before it lets the event loop serve others. */
const SCAN_SLICE_MS = 10;

export interface SqliteReadStoreOptions {
  /** The indexes each read model's queries need (projections/readModelIndexes.ts). */
  indexes?: ReadModelIndexes;
  /**
   * Writes within this many milliseconds share one SQLite transaction, each still atomic in a
   * savepoint of its own: one commit (the costly part of a small write) per window rather than per
   * write. This connection reads its writes at once; other processes see them at the window's
   * commit, checkpoints always together with the changes they cover. 0: each write commits alone.
   */
  groupCommitMs?: number;
  /** Keep a bounded cache of read answers (queryCache.ts); on by default, off to measure without it. */
  answerCache?: boolean;
  /** How long a write waits for another connection's lock (5 s); a change of tables waits longer. */
  busyTimeoutMs?: number;
  /** Told before the rows of a collection are laid out anew (its declarations or the store's layout changed): it takes a while on a large one. */
  onRelayout?: (collection: string, rows: number) => void;
  /** How long a walk apart works before it lets the event loop serve others (10 ms; tests make it 0). */
  scanSliceMs?: number;
  /** Rows a caller's walk reads here before it goes on apart (1,000; tests make it 0). */
  walkHereRows?: number;
  /** Told when a group of writes could not be committed (see ReadModelsWriteError); the store refuses writes from then on. */
  onCommitFailure?: (error: ReadModelsWriteError) => void;
}

export class SqliteReadStore implements ReadStore {
  private readonly statements: Statements;
  private readonly caches: ReadCaches;
  private readonly load: LoadState;
  private readonly commits: Commits;
  private readonly committedListeners = new Set<() => void>();
  private readonly tables: Tables;
  private readonly rows: RowWrites;
  private readonly bulkLoad: BulkLoad;
  private readonly queries: Queries;
  private readonly reads: CachedReads;
  private closed = false;

  private constructor(
    private readonly db: Database.Database,
    file: string,
    indexes: ReadModelIndexes,
    options: SqliteReadStoreOptions,
  ) {
    const busyTimeoutMs = options.busyTimeoutMs ?? BUSY_TIMEOUT_MS;
    createStoreTables(db);
    this.statements = new Statements(db);
    this.caches = new ReadCaches(this.statements);
    this.load = new LoadState(db);
    this.commits = new Commits(db, {
      file,
      groupCommitMs: options.groupCommitMs ?? 0,
      loadingUnsynced: () => this.load.unsynced,
      onCommitFailure: options.onCommitFailure,
      forgetTables: () => {
        this.tables.forget();
        this.caches.clear();
        this.statements.clear();
      },
      onCommitted: () => {
        for (const listener of [...this.committedListeners]) listener();
      },
    });
    this.tables = new Tables(db, indexes, this.statements, this.commits, this.caches, this.load, { busyTimeoutMs, onRelayout: options.onRelayout });
    this.rows = new RowWrites(this.tables, this.statements, this.caches);
    this.bulkLoad = new BulkLoad(db, this.load, this.tables, this.commits, this.statements, this.caches);
    this.queries = new Queries(this.tables, this.statements, this.caches, this.bulkLoad);
    const walksApart = new WalksApart({ file: db.name, busyTimeoutMs, scanSliceMs: options.scanSliceMs ?? SCAN_SLICE_MS, commitGroup: () => this.commits.commitGroup() });
    this.reads = new CachedReads(this.tables, this.statements, this.caches, this.queries, walksApart, this.commits, this.load, {
      answerCache: options.answerCache ?? true,
      walkHereRows: options.walkHereRows ?? WALK_HERE_ROWS,
      onFile: !db.memory,
    });
    if (this.load.marked() === BULK_LOADING) {
      // A bulk load (a rebuild) did not finish, and it wrote without syncing: a power cut may have
      // left any page behind. The read models start over, rebuilt from the log.
      this.tables.dropEverything();
      db.pragma('user_version = 0');
    }
    // The declared collections and their indexes exist from the start, not from their first write.
    this.tables.ensureDeclared();
  }

  /** Opens (creating if need be) the read models in `file`; `:memory:` for a private, temporary store. */
  static open(file: string, options: SqliteReadStoreOptions = {}): SqliteReadStore {
    const indexes = options.indexes ?? {};
    assertIndexDeclarations(indexes);
    for (const name of Object.keys(indexes)) assertCollectionName(name);
    const db = new Database(file);
    try {
      db.pragma('journal_mode = WAL');
      // The read models are rebuilt from the log, and each checkpoint commits with its changes: a
      // power cut may lose the last transactions, never half of one, and the runner replays them.
      db.pragma('synchronous = NORMAL');
      db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? BUSY_TIMEOUT_MS}`);
      // Read models hold people's names and addresses: what a write deletes or replaces is zeroed, not left in free space.
      zeroWhatIsDeleted(db);
      const store = new SqliteReadStore(db, file, indexes, options);
      // Statistics for the planner (which index of two equalities is narrower), kept cheap by a limit.
      // After the tables are as wanted: it may write, and another process laying them out holds the lock.
      // The limit also keeps sqlite_stat4 empty: no sample of an index's values (an e-mail) is copied there.
      db.pragma('analysis_limit = 1000');
      db.pragma('optimize = 0x10002');
      return store;
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /**
   * The named checkpoints of a read-models file, read as they are: no table is made or laid out anew
   * (a rebuild about to replace the file reads its sagas' progress so). Empty for a missing file.
   */
  static checkpointsIn(file: string, names: readonly string[]): Map<string, Checkpoint> {
    return checkpointsIn(file, names, BUSY_TIMEOUT_MS);
  }

  collection<T extends Document = Document>(name: string): Collection<T> {
    assertCollectionName(name);
    // The caller names the document type it stored; JSON cannot check it either.
    return new SqliteCollection(name, this.reads, this.queries, this.rows, this.commits) as unknown as Collection<T>;
  }

  /** Commits the writes of the open group window now. */
  commitGroup(): void {
    this.commits.commitGroup();
  }

  /**
   * Commits the open group and truncates the write-ahead log (see ReadStore.scrubDeleted). Not
   * during a rebuild's load: it holds the folder alone and replays the log, in which a forgotten
   * user's data are unreadable.
   */
  async scrubDeleted(): Promise<boolean> {
    if (this.closed) return false;
    if (this.load.unsynced) return true;
    return this.commits.scrubDeleted();
  }

  onCommitted(listener: () => void): () => void {
    this.committedListeners.add(listener);
    return () => this.committedListeners.delete(listener);
  }

  onCommitLost(listener: CommitLostListener): () => void {
    return this.commits.onCommitLost(listener);
  }

  /** Drops every collection and starts a bulk load into the empty store (see BulkLoad.dropAllForBulkLoad). */
  async dropAllForBulkLoad(): Promise<void> {
    this.bulkLoad.dropAllForBulkLoad();
  }

  /** For a first start on an empty store: the declared indexes wait (see BulkLoad.deferIndexesWhileEmpty). Answers whether they do. */
  deferIndexesWhileEmpty(): boolean {
    return this.bulkLoad.deferIndexesWhileEmpty();
  }

  /** Builds the indexes deferIndexesWhileEmpty deferred, and clears the file's mark (a rebuild's load ends with endBulkLoad). */
  buildDeferredIndexes(): void {
    this.bulkLoad.buildDeferredIndexes();
  }

  /** Ends the bulk load: builds the deferred indexes, and syncs everything to disk before clearing the mark. */
  async endBulkLoad(): Promise<void> {
    this.bulkLoad.endBulkLoad();
  }

  /** During a rebuild's bulk load: copies in the collections and checkpoints of another file loaded apart (see BulkLoad.absorb). */
  absorb(file: string, collections: readonly string[], checkpoints: readonly string[]): void {
    this.bulkLoad.absorb(file, collections, checkpoints);
  }

  /** Moves on with every write through this connection (each drops cached answers) and every commit of another. */
  changeMark(): number {
    return this.caches.changeMark();
  }

  /** Applies the ops in order, then stores the checkpoints, in one transaction. */
  async commit(ops: readonly WriteOp[], checkpoints: readonly CheckpointWrite[]): Promise<void> {
    for (const op of ops) {
      assertCollectionName(op.collection);
      const id = op.kind === 'put' ? op.doc._id : op.id;
      if (typeof id !== 'string' && (typeof id !== 'number' || !Number.isFinite(id))) throw new Error(`A committed document's _id must be a string or a finite number, got ${JSON.stringify(id)}`);
    }
    this.commits.transaction(() => {
      for (const op of ops) {
        // Written at once (encoded, keyed): no copy of the document is kept, so none is made.
        if (op.kind === 'put') this.rows.put(op.collection, op.doc);
        else {
          const seq = this.rows.seqOf(op.collection, op.id);
          if (seq !== undefined) this.rows.remove(op.collection, seq);
        }
      }
      for (const { name, position, store } of checkpoints) writeCheckpoint(this.statements, name, position, store);
    });
  }

  async getCheckpoint(name: string): Promise<bigint | undefined> {
    return (await this.readCheckpoint(name))?.position;
  }

  async readCheckpoint(name: string): Promise<Checkpoint | undefined> {
    const checkpoint = readCheckpoint(this.statements, name);
    // A checkpoint commits with the changes it covers: a caller that saw it (waiting for its own write
    // from another process) must read those changes in this very turn, so look again after it.
    this.caches.lookAgain();
    return checkpoint;
  }

  async setCheckpoint(name: string, position: bigint, store?: string): Promise<void> {
    this.commits.transaction(() => writeCheckpoint(this.statements, name, position, store));
  }

  /** In row order (seq), a page by its primary key: no sort, no scan of what came before. */
  async *walk(name: string, pageSize: number): AsyncIterable<Document[]> {
    for (const rows of rowPages(this.statements, this.tables.ensure(name), pageSize)) yield rows.map((row) => decode(row.doc));
  }

  async dropAll(): Promise<void> {
    this.tables.dropEverything();
  }

  /** The query plan SQLite picks for a find, one line per step: what the index tests read. */
  explainFind(name: string, filter: Filter, options: FindOptions = {}): { pushedDown: boolean; plan: string[] } {
    return this.queries.explainFind(name, filter, options);
  }

  /** The query plan SQLite picks for a count. */
  explainCount(name: string, filter: Filter): string[] {
    return this.queries.explainCount(name, filter);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      this.commits.commitGroup();
    } catch {
      // Lost (a full disk) or reported (a damaged file): the projections apply it again at the next start, from the checkpoints.
    }
    this.statements.clear();
    try {
      this.db.pragma('optimize');
    } catch {
      // Statistics only (a full disk cannot take them): the file is closed all the same.
    }
    this.db.close();
  }
}
