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
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import Database from 'better-sqlite3';
import { find as mingoFind, Query, update as applyUpdate } from 'mingo';
import { assertIndexDeclarations, type IndexDeclaration, type ReadModelIndexes } from './indexDeclarations';
import { assertCollectionName, DuplicateIdError } from './documents/collectionNames';
import { equalityMatcher } from './documents/equalityMatcher';
import { copyDoc, isPlainObject } from './documents/plainObjects';
import { buildUpsertDoc, checkedUpdate } from './documents/updates';
import { jsonPrefilter } from './jsonPrefilter';
import { applyPlainUpdate } from './plainUpdate';
import { QueryCache } from './queryCache';
import type { Checkpoint, CheckpointWrite, Collection, CommitLostListener, Document, DocumentId, Filter, FindOptions, ReadStore, Update, UpdateResult, WriteOp } from './readStore';
import { truncateWal, zeroWhatIsDeleted } from '../sqliteErasure';
import { noteStorageFailure } from '../storageFull';

type Statement = Database.Statement<unknown[], unknown>;
interface Row {
  seq: number;
  doc: string;
}
interface Found {
  seq: number;
  doc: Document;
}

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;
/** Collection names come from the read models' code, a few dozen: each table name is made once, not at every write. */
const docTables = new Map<string, string>();
function docTable(collection: string): string {
  let table = docTables.get(collection);
  if (table === undefined) docTables.set(collection, (table = `c:${collection}`));
  return table;
}
const keyTable = (collection: string): string => `k:${collection}`;
const idKey = (id: DocumentId): string => JSON.stringify(id);

/**
 * The column holding a declared scalar field's index key (keyAt): written with the row, so an index
 * is built by sorting the column, not by parsing every document's JSON once per index.
 */
const keyColumnName = (path: string): string => `k:${path}`;
const keyColumn = (path: string): string => quote(keyColumnName(path));

const TRUE_KEY = Buffer.from([1]);
const FALSE_KEY = Buffer.from([0]);

/** A scalar as an SQL key, or undefined for values SQL does not compare as mingo does. */
function sqlKey(value: unknown): string | number | Buffer | undefined {
  if (typeof value === 'string') return value;
  // JSON cannot hold -0, NaN or the infinities: they are stored tagged, out of SQL's reach.
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0) ? value : undefined;
  if (typeof value === 'boolean') return value ? TRUE_KEY : FALSE_KEY;
  return undefined;
}

/** Whether the value holds anything plain JSON would not give back as it is (dates, bytes, -0, NaN, infinities). */
function needsTags(value: unknown): boolean {
  if (typeof value === 'number') return sqlKey(value) === undefined;
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    for (const item of value) if (needsTags(item)) return true;
    return false;
  }
  if (!isPlainObject(value)) return true;
  for (const key in value) if (needsTags(value[key])) return true;
  return false;
}

// JSON keeps the few non-JSON values read models may hold as tagged objects (MongoDB forbids `$` keys
// in documents, so these cannot clash with stored data). A replacer makes stringify several times
// slower, and most documents need none.
function encode(doc: Document): string {
  if (!needsTags(doc)) return JSON.stringify(doc);
  return JSON.stringify(doc, function (this: Record<string, unknown>, key: string, value: unknown) {
    const raw = this[key];
    if (raw instanceof Date) return { $date: raw.toISOString() };
    if (raw instanceof Uint8Array) return { $binary: Buffer.from(raw).toString('base64') };
    if (typeof raw === 'number' && sqlKey(raw) === undefined) return { $double: Object.is(raw, -0) ? '-0' : String(raw) };
    return value;
  });
}

/** The value a tagged object stands for (one key, `$date`, `$binary` or `$double`, with a string), else undefined. */
function untagged(o: Record<string, unknown>): unknown {
  let only: string | undefined;
  for (const key in o) {
    if (only !== undefined) return undefined;
    only = key;
  }
  const value = only === undefined ? undefined : o[only];
  if (typeof value !== 'string') return undefined;
  if (only === '$date') return new Date(value);
  if (only === '$binary') return Buffer.from(value, 'base64');
  if (only === '$double') return Number(value);
  return undefined;
}

/** Puts back, in place, the values that JSON kept tagged (see encode). */
function revive(node: unknown[] | Record<string, unknown>): void {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const value = node[i];
      if (value === null || typeof value !== 'object') continue;
      const plain = Array.isArray(value) ? undefined : untagged(value as Record<string, unknown>);
      if (plain !== undefined) node[i] = plain;
      else revive(value as unknown[] | Record<string, unknown>);
    }
    return;
  }
  for (const key in node) {
    const value = node[key];
    if (value === null || typeof value !== 'object') continue;
    const plain = Array.isArray(value) ? undefined : untagged(value as Record<string, unknown>);
    if (plain !== undefined) node[key] = plain;
    else revive(value as unknown[] | Record<string, unknown>);
  }
}

function decode(text: string): Document {
  const doc = JSON.parse(text) as Document;
  // A walk after parsing costs a third of a reviver's calls; most documents need neither.
  if (text.includes('"$date"') || text.includes('"$binary"') || text.includes('"$double"')) revive(doc);
  return doc;
}

/** The filter as a test of one document: the plain equalities' own test, else mingo's. */
function matcherOf(filter: Filter): (doc: Document) => boolean {
  const equality = equalityMatcher(filter);
  if (equality) return equality;
  const query = new Query(filter, {});
  return (doc) => query.test(doc);
}

/** A walk's statement (SqliteReadStore.walkOf): its rows carry a document only where the JSON narrowing passes. */
interface Walk {
  sql: string;
  params: unknown[];
}

/** What a walk keeps of the rows it is offered: the page asked for (skip, then up to limit), or their count. */
class Page {
  readonly found: Found[] = [];
  counted = 0;
  private skip: number;

  constructor(
    private readonly test: (doc: Document) => boolean,
    private readonly limit: number | undefined,
    skip: number | undefined,
    private readonly counting: boolean,
  ) {
    this.skip = skip ?? 0;
  }

  /** One row of the walk; true once the page is full and the walk may end. */
  offer(seq: number, text: string | null): boolean {
    if (text === null) return false;
    const doc = decode(text);
    if (!this.test(doc)) return false;
    if (this.counting) {
      this.counted += 1;
      return false;
    }
    if (this.skip > 0) {
      this.skip -= 1;
      return false;
    }
    this.found.push({ seq, doc });
    // A limit of 0 is none, as on MongoDB.
    return this.limit !== undefined && this.limit > 0 && this.found.length >= this.limit;
  }
}

/** A field SQL cannot compare as mingo does: an array on its path, or a value sqlKey has no key for. */
const IRREGULAR = Symbol('irregular');

/**
 * The index key of the value at a dotted path: its scalar (sqlKey: booleans as blobs, which SQLite
 * orders after text, as MongoDB orders booleans after strings); null when it is absent or null, or
 * under a value that holds no fields (as the stored JSON has it); IRREGULAR when SQL cannot compare
 * it exactly (an array on the way, or a date, bytes, -0, NaN or an infinity there).
 */
function keyAt(doc: Document, path: readonly string[]): string | number | Buffer | null | typeof IRREGULAR {
  let node: unknown = doc;
  for (const part of path) {
    if (node === undefined || node === null) return null;
    if (Array.isArray(node)) return IRREGULAR;
    if (typeof node !== 'object' || node instanceof Date || node instanceof Uint8Array) return null;
    node = (node as Record<string, unknown>)[part];
  }
  if (node === undefined || node === null) return null;
  return sqlKey(node) ?? IRREGULAR;
}

/** The keys an equality query on the path matches, MongoDB-style: the scalars there, and those inside arrays. */
function keysAt(node: unknown, parts: readonly string[]): (string | number | Buffer)[] {
  if (parts.length === 0) {
    const items = Array.isArray(node) ? node : [node];
    return items.map(sqlKey).filter((key) => key !== undefined);
  }
  if (Array.isArray(node)) return node.flatMap((item) => keysAt(item, parts));
  if (!isPlainObject(node)) return [];
  return keysAt(node[parts[0]!], parts.slice(1));
}

/** The SQLite name of a declared index: its table and its fields, `-` marking a descending one. */
function indexName(table: string, declaration: IndexDeclaration): string {
  return `${table}:${Object.entries(declaration.keys).map(([path, direction]) => `${path}${direction === -1 ? '-' : ''}`).join(',')}`;
}

/** What a collection's declarations ask of its rows: the scalar fields SQL may compare, and the array fields keyed aside. */
class Layout {
  readonly scalarPaths: ReadonlySet<string>;
  readonly arrayPaths: ReadonlySet<string>;
  readonly scalarIndexes: readonly IndexDeclaration[];
  /** scalarPaths split at their dots, once rather than for every row written. */
  private readonly scalarParts: readonly (readonly string[])[];

  constructor(declarations: readonly IndexDeclaration[]) {
    this.scalarIndexes = declarations.filter((d) => !d.array);
    this.scalarPaths = new Set(['_id', ...this.scalarIndexes.flatMap((d) => Object.keys(d.keys))]);
    this.arrayPaths = new Set(declarations.filter((d) => d.array).flatMap((d) => Object.keys(d.keys)));
    this.scalarParts = [...this.scalarPaths].map((path) => path.split('.'));
  }

  /** Stored with the collection: when it changes, the rows' flags and keys are computed again. */
  get signature(): string {
    // `columns`: the keys are columns of the row (files made before kept them in expression indexes).
    return JSON.stringify({ scalar: [...this.scalarPaths].sort(), array: [...this.arrayPaths].sort(), columns: 1 });
  }

  /** The key columns (quoted), in the order rowValues gives their values. */
  get keyColumns(): string[] {
    return [...this.scalarPaths].map(keyColumn);
  }

  /**
   * The row's `plain` flag (every declared field one SQL compares exactly) and key columns, in one
   * walk of each path. A row that is not plain is never searched by its keys (see matching: such
   * rows are read whole and left to mingo), so its keys are left null.
   */
  rowValues(doc: Document): unknown[] {
    const values: unknown[] = [1];
    for (const path of this.scalarParts) {
      const key = keyAt(doc, path);
      if (key === IRREGULAR) return [0, ...this.scalarParts.map(() => null)];
      values.push(key);
    }
    return values;
  }
}

interface Clause {
  sql: string;
  params: unknown[];
  /** The field a pure equality (or `$in`, or null) pins: what an index's leading fields can use. */
  pins?: string;
}

interface FilterPlan {
  /** Clauses SQL evaluates exactly on plain rows. */
  exact: Clause[];
  /** Clauses on array fields: they narrow every row, plain or not, but mingo decides. */
  narrowing: Clause[];
  /** Whether part of the filter is left to mingo alone. */
  residual: boolean;
  /** Clauses on the stored JSON that narrow the part left to mingo (jsonPrefilter.ts): any row, mingo decides. */
  prefilter: Clause[];
}

/** The SQL for one field's condition, exact for a plain row, or undefined when mingo must decide. */
function translateCondition(path: string, condition: unknown): Clause | undefined {
  if (path === '_id') {
    const key = sqlKey(condition);
    if (typeof condition === 'string' || typeof condition === 'number') return key === undefined ? undefined : { sql: 'id = ?', params: [idKey(condition)] };
    if (isPlainObject(condition) && Object.keys(condition).length === 1 && Array.isArray(condition.$in) && condition.$in.every((v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)))) {
      const ids = condition.$in as DocumentId[];
      return ids.length === 0 ? { sql: '0', params: [] } : { sql: `id IN (${ids.map(() => '?').join(', ')})`, params: ids.map(idKey) };
    }
  }
  const k = keyColumn(path);
  if (condition === null) return { sql: `${k} IS NULL`, params: [], pins: path };
  const key = sqlKey(condition);
  if (key !== undefined) return { sql: `${k} = ?`, params: [key], pins: path };
  if (!isPlainObject(condition)) return undefined;
  const entries = Object.entries(condition);
  if (entries.length === 0 || entries.some(([op]) => !op.startsWith('$'))) return undefined;
  if (entries.length === 1 && (entries[0]![0] === '$eq' || entries[0]![0] === '$in')) {
    const single = translateOperator(k, entries[0]![0], entries[0]![1]);
    return single && { ...single, pins: path };
  }
  const parts: Clause[] = [];
  for (const [op, arg] of entries) {
    const part = translateOperator(k, op, arg);
    if (!part) return undefined;
    parts.push(part);
  }
  return { sql: parts.map((p) => p.sql).join(' AND '), params: parts.flatMap((p) => p.params) };
}

function translateOperator(k: string, op: string, arg: unknown): Clause | undefined {
  const key = sqlKey(arg);
  switch (op) {
    case '$eq':
      if (arg === null) return { sql: `${k} IS NULL`, params: [] };
      return key === undefined ? undefined : { sql: `${k} = ?`, params: [key] };
    case '$ne':
      if (arg === null) return { sql: `${k} IS NOT NULL`, params: [] };
      return key === undefined ? undefined : { sql: `${k} IS NOT ?`, params: [key] };
    case '$in': {
      if (!Array.isArray(arg)) return undefined;
      const keys = arg.filter((v) => v !== null).map(sqlKey);
      if (keys.some((v) => v === undefined)) return undefined;
      const ors = [...(arg.includes(null) ? [`${k} IS NULL`] : []), ...(keys.length > 0 ? [`${k} IN (${keys.map(() => '?').join(', ')})`] : [])];
      return { sql: ors.length === 0 ? '0' : `(${ors.join(' OR ')})`, params: keys };
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      // MongoDB compares numbers with numbers and strings with strings only: bound the other side by type.
      const sign = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op];
      if (typeof arg === 'number' && Number.isFinite(arg)) return { sql: `${k} ${sign} ? AND ${k} < ''`, params: [arg] };
      if (typeof arg === 'string') return { sql: `${k} ${sign} ? AND ${k} >= '' AND ${k} < x''`, params: [arg] };
      return undefined;
    }
    default:
      return undefined;
  }
}

function translateArrayCondition(keys: string, path: string, condition: unknown): Clause | undefined {
  const wanted = isPlainObject(condition) && Object.keys(condition).length === 1 && Array.isArray(condition.$in) ? condition.$in : [condition];
  const sqlKeys = wanted.map(sqlKey);
  if (sqlKeys.length === 0 || sqlKeys.some((v) => v === undefined)) return undefined;
  return { sql: `seq IN (SELECT seq FROM ${keys} WHERE path = ? AND key IN (${sqlKeys.map(() => '?').join(', ')}))`, params: [path, ...sqlKeys] };
}

type Modifier = Parameters<typeof applyUpdate>[1];

/** The update applied to a copy of the document; undefined when it changes nothing. */
function updated(doc: Document, update: Update): Document | undefined {
  const plain = applyPlainUpdate(doc, update);
  if (plain) return plain.changed ? plain.next : undefined;
  const { $setOnInsert: _onInsertOnly, ...operators } = update;
  const next = copyDoc(doc);
  const changed = applyUpdate(next, operators as Modifier, undefined, undefined, { cloneMode: 'deep' });
  return changed.length === 0 ? undefined : copyDoc(next);
}

/**
 * The limit is written into the SQL: bound as a parameter, SQLite took ten times as long over a
 * one-row index search (the few limits the queries use keep the statements few). MongoDB reads a
 * limit of 0 as "no limit"; SQLite's is -1.
 */
function limitClause(limit: number | undefined): string {
  const n = limit && Number.isSafeInteger(limit) && limit > 0 ? limit : -1;
  return `LIMIT ${n} OFFSET ?`;
}

interface RowSql {
  docById: string;
  seqById: string;
  insert: string;
  upsert: string;
  update: string;
  remove: string;
}

interface CheckpointRow {
  position: string;
  store: string | null;
}

const checkpointOf = (row: CheckpointRow): Checkpoint => (row.store === null ? { position: BigInt(row.position) } : { position: BigInt(row.position), store: row.store });

/** How long a write waits for another connection's lock. */
const BUSY_TIMEOUT_MS = 5000;
/** How long a change of a collection's tables waits for another process's: laying a large one out takes a while. */
const SCHEMA_BUSY_TIMEOUT_MS = 10 * 60 * 1000;

/** The file's user_version while a bulk load is under way (dropAllForBulkLoad). */
const BULK_LOADING = 1;
/** The file's user_version while a first start fills an empty store with its indexes deferred (deferIndexesWhileEmpty). */
const INDEXES_DEFERRED = 2;
/** The group commit window during a bulk load: no one else reads meanwhile, and each commit rewrites the pages it touched. */
const BULK_GROUP_COMMIT_MS = 1000;
/** The page cache during a bulk load, in KiB: the B-trees being filled stay in memory (SQLite's default is 2 MB). */
const BULK_LOAD_CACHE_KIB = 65_536;

/** The `_id` of a filter that is `{ _id: <string or finite number> }` and nothing else. */
function onlyId(filter: Filter): DocumentId | undefined {
  let id: unknown;
  for (const key in filter) {
    if (key !== '_id') return undefined;
    id = filter[key];
  }
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : undefined;
}

/** Declared indexes waiting for the end of a load: those deferred, and those built early for a query. */
interface BulkLoad {
  deferred: Set<string>;
  indexed: Set<string>;
  /** A rebuild's load (dropAllForBulkLoad): unsynced, marked, long commit windows. */
  unsynced: boolean;
}

/** Prepared statements are reused by SQL text; the set of texts is bounded (filters vary only in shape). */
const STATEMENT_CACHE_SIZE = 256;
/**
 * Rows a caller's walk reads on the store's own connection before it goes on apart
 * (SqliteReadStore.walkApart): a short walk stays as quick as it was, a long one holds the event loop
 * for no more than these.
 */
const WALK_HERE_ROWS = 1000;
/** How long a walk apart works before it lets the event loop serve others. */
const SCAN_SLICE_MS = 10;
/** Walks apart at once, each on a connection of its own; more wait their turn. */
const MAX_SCANS = 4;

class SqliteCollection implements Collection<Document> {
  constructor(
    private readonly store: SqliteReadStore,
    private readonly name: string,
  ) {}

  async find(filter: Filter = {}, options: FindOptions = {}): Promise<Document[]> {
    return this.store.readMany(this.name, filter, options);
  }

  async findOne(filter: Filter): Promise<Document | null> {
    return this.store.read(this.name, filter, { limit: 1 })[0] ?? null;
  }

  async count(filter: Filter = {}): Promise<number> {
    return this.store.readManyCount(this.name, filter);
  }

  async updateOne(filter: Filter, given: Update, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    const update = checkedUpdate(given);
    return this.store.transaction(() => {
      const [found] = this.store.matching(this.name, filter, { limit: 1 });
      if (found) {
        const next = updated(found.doc, update);
        if (next) this.store.replace(this.name, found.seq, next);
        return { matched: 1, modified: next ? 1 : 0, upserted: false };
      }
      if (!options.upsert) return { matched: 0, modified: 0, upserted: false };
      const created = copyDoc(buildUpsertDoc(filter, update));
      if (this.store.seqOf(this.name, created._id) !== undefined) throw new DuplicateIdError(created._id);
      this.store.insert(this.name, created);
      return { matched: 0, modified: 0, upserted: true };
    });
  }

  async updateMany(filter: Filter, given: Update): Promise<UpdateResult> {
    const update = checkedUpdate(given);
    return this.store.transaction(() => {
      const found = this.store.matching(this.name, filter, {});
      let modified = 0;
      for (const { seq, doc } of found) {
        const next = updated(doc, update);
        if (!next) continue;
        this.store.replace(this.name, seq, next);
        modified++;
      }
      return { matched: found.length, modified, upserted: false };
    });
  }

  async deleteOne(filter: Filter): Promise<number> {
    return this.store.transaction(() => {
      const [found] = this.store.matching(this.name, filter, { limit: 1 });
      if (found) this.store.remove(this.name, found.seq);
      return found ? 1 : 0;
    });
  }

  async deleteMany(filter: Filter): Promise<number> {
    return this.store.transaction(() => {
      const found = this.store.matching(this.name, filter, {});
      for (const { seq } of found) this.store.remove(this.name, seq);
      return found.length;
    });
  }
}

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

/**
 * A group of writes could not be committed (a damaged file, a failing disk): they are rolled back, and
 * the store refuses every later write, for the projections already took those writes as done; their
 * checkpoints, committed with them, were rolled back too, so a restart resumes before them.
 */
export class ReadModelsWriteError extends Error {
  readonly code = 'READ_MODELS_WRITE_FAILED';
  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    super(`The read models in ${file} could not be written (${cause instanceof Error ? cause.message : String(cause)}); restart the service: it checks the file at start and rebuilds a damaged one from the log`, { cause });
    this.name = 'ReadModelsWriteError';
  }
}

export class SqliteReadStore implements ReadStore {
  private readonly statements = new Map<string, Statement>();
  /** Collections whose tables exist and match their layout, in this connection. */
  private readonly ready = new Set<string>();
  private readonly layouts = new Map<string, Layout>();
  private readonly empty = new Layout([]);
  private closed = false;
  private groupTimer: NodeJS.Timeout | undefined;
  private readonly irregular = new Map<string, boolean>();
  private readonly answers = new QueryCache();
  private seenVersion: number | undefined;
  private othersLookedAt = false;
  /** When the open group window began (performance.now()), and how many savepoints are open in it. */
  private groupOpenedAt = 0;
  private depth = 0;
  private readonly rowSql = new Map<string, RowSql>();
  private readonly lossListeners = new Set<CommitLostListener>();
  /** During a bulk load: the collections whose declared indexes wait for its end, and those built early. */
  private bulk: BulkLoad | undefined;
  /** Set by a commit that failed: every later write is refused with it. */
  private failed: ReadModelsWriteError | undefined;
  private file = ':memory:';
  private onCommitFailure: ((error: ReadModelsWriteError) => void) | undefined;

  private constructor(
    private readonly db: Database.Database,
    indexes: ReadModelIndexes,
    private readonly groupCommitMs: number,
    private readonly answerCache: boolean,
    private readonly onRelayout: ((collection: string, rows: number) => void) | undefined,
    private readonly busyTimeoutMs: number,
    private readonly scanSliceMs: number,
    private readonly walkHereRows: number,
  ) {
    const tables = db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('checkpoints', 'collections')`).get() as { n: number };
    if (tables.n < 2) {
      db.exec(`
        CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position TEXT NOT NULL, store TEXT) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS collections (name TEXT PRIMARY KEY, layout TEXT NOT NULL) WITHOUT ROWID;
      `);
    }
    for (const [name, declarations] of Object.entries(indexes)) this.layouts.set(name, new Layout(declarations));
    if ((db.pragma('user_version', { simple: true }) as number) === BULK_LOADING) {
      // A bulk load (a rebuild) did not finish, and it wrote without syncing: a power cut may have
      // left any page behind. The read models start over, rebuilt from the log.
      this.dropEverything();
      db.pragma('user_version = 0');
    }
    // The declared collections and their indexes exist from the start, not from their first write.
    for (const name of this.layouts.keys()) this.ensure(name);
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
      const store = new SqliteReadStore(db, indexes, options.groupCommitMs ?? 0, options.answerCache ?? true, options.onRelayout, options.busyTimeoutMs ?? BUSY_TIMEOUT_MS, options.scanSliceMs ?? SCAN_SLICE_MS, options.walkHereRows ?? WALK_HERE_ROWS);
      store.file = file;
      store.onCommitFailure = options.onCommitFailure;
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
    const found = new Map<string, Checkpoint>();
    if (!existsSync(file)) return found;
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      const hasTable = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'`).get() !== undefined;
      if (!hasTable) return found;
      const read = db.prepare('SELECT position, store FROM checkpoints WHERE name = ?');
      for (const name of names) {
        const row = read.get(name) as CheckpointRow | undefined;
        if (row) found.set(name, checkpointOf(row));
      }
      return found;
    } finally {
      db.close();
    }
  }

  collection<T extends Document = Document>(name: string): Collection<T> {
    assertCollectionName(name);
    // The caller names the document type it stored; JSON cannot check it either.
    return new SqliteCollection(this, name) as unknown as Collection<T>;
  }

  /**
   * The texts of a collection's row statements, made once: the statement cache is keyed by text, and
   * a text built anew for every row is hashed anew. Ensures the collection's table first.
   */
  private sqlOf(name: string): RowSql {
    this.ensure(name);
    let sql = this.rowSql.get(name);
    if (!sql) {
      const t = quote(docTable(name));
      const columns = ['plain', ...this.layout(name).keyColumns];
      sql = {
        docById: `SELECT doc FROM ${t} WHERE id = ?`,
        seqById: `SELECT seq FROM ${t} WHERE id = ?`,
        insert: `INSERT INTO ${t} (id, doc, ${columns.join(', ')}) VALUES (?, ?, ${columns.map(() => '?').join(', ')})`,
        upsert: `INSERT INTO ${t} (id, doc, ${columns.join(', ')}) VALUES (?, ?, ${columns.map(() => '?').join(', ')}) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc, ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}`,
        update: `UPDATE ${t} SET doc = ?, ${columns.map((c) => `${c} = ?`).join(', ')} WHERE seq = ?`,
        remove: `DELETE FROM ${t} WHERE seq = ?`,
      };
      this.rowSql.set(name, sql);
    }
    return sql;
  }

  private layout(name: string): Layout {
    return this.layouts.get(name) ?? this.empty;
  }

  private prepare(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= STATEMENT_CACHE_SIZE) this.statements.clear();
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs a write atomically: alone in a transaction, or in a savepoint of the open group (see groupCommitMs). */
  transaction<R>(work: () => R, options: { group?: boolean } = {}): R {
    // The timer alone cannot end a window while writes follow one another without a pause (a
    // catch-up of the whole log runs on promises alone, and timers wait for a pause): a write
    // arriving after the window's time commits it first, so a window never outgrows its time.
    // A rebuild's load widens the window of a store that groups commits; one that does not keeps not.
    if (this.failed) throw this.failed;
    const windowMs = this.bulk?.unsynced && this.groupCommitMs > 0 ? BULK_GROUP_COMMIT_MS : this.groupCommitMs;
    if (this.depth === 0 && this.groupTimer && performance.now() - this.groupOpenedAt >= windowMs) this.commitGroup();
    if (!this.db.inTransaction) {
      if (windowMs <= 0 || options.group === false) return this.db.transaction(work).immediate();
      this.db.exec('BEGIN IMMEDIATE');
      this.groupOpenedAt = performance.now();
      // From the timer, a failed commit has no caller to tell: it is reported (onCommitFailure) and the
      // window's writes are lost (see lose()), never thrown where it would stop the process.
      this.groupTimer = setTimeout(() => {
        try {
          this.commitGroup();
        } catch {
          // Reported by commitGroup.
        }
      }, windowMs);
    }
    this.db.exec('SAVEPOINT write');
    this.depth += 1;
    try {
      const result = work();
      this.db.exec('RELEASE write');
      return result;
    } catch (error) {
      // SQLite may roll the whole transaction back on its own (SQLITE_FULL, an I/O error): then the
      // window's earlier writes went with it.
      if (!this.db.inTransaction) {
        if (this.groupTimer) this.lose(error);
        throw error;
      }
      this.db.exec('ROLLBACK TO write');
      this.db.exec('RELEASE write');
      throw error;
    } finally {
      this.depth -= 1;
    }
  }

  /** Commits the writes of the open group window now. */
  commitGroup(): void {
    if (this.groupTimer) clearTimeout(this.groupTimer);
    this.groupTimer = undefined;
    if (!this.db.open || !this.db.inTransaction) return;
    try {
      this.db.exec('COMMIT');
    } catch (error) {
      const storageFull = this.lose(error);
      const failure = new ReadModelsWriteError(this.file, error);
      // A full disk passes: the projections apply the window again once there is room. Anything else
      // (a damaged file) refuses every later write: the start's check rebuilds the file.
      if (!storageFull) this.failed ??= failure;
      this.onCommitFailure?.(failure);
      throw storageFull ? error : (this.failed ?? failure);
    }
  }

  /**
   * Commits the open group and truncates the write-ahead log (see ReadStore.scrubDeleted). Not
   * during a rebuild's load: it holds the folder alone and replays the log, in which a forgotten
   * user's data are unreadable.
   */
  async scrubDeleted(): Promise<boolean> {
    if (this.closed) return false;
    if (this.bulk?.unsynced) return true;
    return truncateWal(this.db, () => this.commitGroup());
  }

  onCommitLost(listener: CommitLostListener): () => void {
    this.lossListeners.add(listener);
    return () => this.lossListeners.delete(listener);
  }

  /**
   * The open window's writes are lost (its commit failed): rolled back, what this connection knew
   * of its tables forgotten (a table the window made is gone), and the listeners told which
   * checkpoints are durable, so that the projections apply again what went with the window.
   * Answers whether the failure was for want of space.
   */
  private lose(error: unknown): boolean {
    if (this.groupTimer) clearTimeout(this.groupTimer);
    this.groupTimer = undefined;
    if (this.db.open && this.db.inTransaction) {
      try {
        this.db.exec('ROLLBACK');
      } catch {
        // SQLite rolled it back already
      }
    }
    this.ready.clear();
    this.irregular.clear();
    this.answers.clear();
    this.statements.clear();
    const storageFull = noteStorageFailure(error);
    const durable = new Map<string, bigint>();
    try {
      for (const row of this.db.prepare('SELECT name, position FROM checkpoints').all() as { name: string; position: string }[]) durable.set(row.name, BigInt(row.position));
    } catch {
      // Unreadable: no checkpoint is taken for durable, so the listeners start over from the log.
    }
    for (const listener of this.lossListeners) listener(error, durable);
    return storageFull;
  }

  /**
   * Drops every collection and starts a bulk load into the empty store, for a rebuild that holds
   * the data folder's exclusive lock (no other connection reads or writes meanwhile): writes are
   * not synced to disk, commits are grouped in long windows, and each collection's declared indexes
   * are built once its rows are in (see deferIndexesWhileEmpty). A load cut short (a crash, a power
   * cut) leaves a mark that makes the next open drop the read models: they are rebuilt from the log.
   */
  async dropAllForBulkLoad(): Promise<void> {
    this.commitGroup();
    // The mark is on disk before the first write that is not.
    this.db.pragma('user_version = ' + String(BULK_LOADING));
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    this.db.pragma('synchronous = OFF');
    this.db.pragma(`cache_size = ${BULK_LOAD_CACHE_KIB * -1}`);
    // The index builds at the end sort on the other cores too (by then the rebuild's other thread is done).
    this.db.pragma(`threads = ${Math.max(0, availableParallelism() - 1)}`);
    this.bulk = { deferred: new Set(), indexed: new Set(), unsynced: true };
    await this.dropAll();
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
    if (this.bulk) return !this.bulk.unsynced;
    this.commitGroup();
    const deferred = this.transaction(() => {
      if (this.marked() === INDEXES_DEFERRED) return true;
      if (this.db.prepare('SELECT 1 FROM checkpoints LIMIT 1').get() !== undefined) return false;
      const tables = this.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'c:%'`).pluck().all() as string[];
      for (const table of tables) if (this.db.prepare(`SELECT 1 FROM ${quote(table)} LIMIT 1`).get() !== undefined) return false;
      // Only the declared ones: the unique id, the irregular rows' and the array keys' stay.
      const declared = new Set(tables.flatMap((table) => this.layout(table.slice(2)).scalarIndexes.map((d) => indexName(table, d))));
      const indexes = this.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name LIKE 'c:%'`).pluck().all() as string[];
      for (const index of indexes) if (declared.has(index)) this.db.exec(`DROP INDEX ${quote(index)}`);
      this.db.pragma(`user_version = ${INDEXES_DEFERRED}`);
      return true;
    }, { group: false });
    if (!deferred) return false;
    this.statements.clear();
    this.ready.clear();
    this.db.pragma(`cache_size = ${BULK_LOAD_CACHE_KIB * -1}`);
    this.bulk = { deferred: new Set(), indexed: new Set(), unsynced: false };
    // Every declared collection waits, those this start never writes too.
    for (const name of this.layouts.keys()) this.ensure(name);
    return true;
  }

  /** Builds the indexes deferIndexesWhileEmpty deferred, and clears the file's mark (a rebuild's load ends with endBulkLoad). */
  buildDeferredIndexes(): void {
    const bulk = this.bulk;
    if (!bulk || bulk.unsynced) return;
    // The mark goes first, or ensure() would take these indexes for another's to build; a build cut
    // short leaves indexes missing, which the next open makes.
    this.commitGroup();
    this.db.pragma('user_version = 0');
    this.buildDeferred(bulk);
    this.db.pragma('cache_size = -2000');
  }

  private marked(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  private buildDeferred(bulk: BulkLoad): void {
    this.commitGroup();
    this.bulk = undefined;
    for (const name of bulk.deferred) {
      this.ready.delete(name);
      this.ensure(name);
    }
  }

  /** Ends the bulk load: builds the deferred indexes, and syncs everything to disk before clearing the mark. */
  async endBulkLoad(): Promise<void> {
    const bulk = this.bulk;
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
    if (!this.bulk?.unsynced) throw new Error('absorb is for a rebuild\'s bulk load');
    this.commitGroup();
    this.db.prepare('ATTACH DATABASE ? AS part').run(file);
    try {
      this.db.transaction(() => {
        for (const name of collections) {
          const table = this.ensure(name);
          const tables = [table, ...(this.layout(name).arrayPaths.size > 0 ? [keyTable(name)] : [])];
          for (const t of tables) {
            // A collection the part never wrote (an empty log) has no table there: nothing to copy.
            if (this.db.prepare(`SELECT 1 FROM part.sqlite_master WHERE type = 'table' AND name = ?`).get(t) === undefined) continue;
            if (this.db.prepare(`SELECT 1 FROM ${quote(t)} LIMIT 1`).get() !== undefined) throw new Error(`${t} is not empty: it cannot take the rows loaded apart`);
            const columns = (this.db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(t) as string[]).map(quote).join(', ');
            this.db.exec(`INSERT INTO main.${quote(t)} (${columns}) SELECT ${columns} FROM part.${quote(t)}`);
          }
          this.answers.clearTable(table);
          this.irregular.delete(table);
        }
        const copy = this.db.prepare('INSERT INTO main.checkpoints (name, position, store) SELECT name, position, store FROM part.checkpoints WHERE name = ? ON CONFLICT (name) DO UPDATE SET position = excluded.position, store = excluded.store');
        for (const name of checkpoints) copy.run(name);
      })();
    } finally {
      this.db.exec('DETACH DATABASE part');
    }
  }

  /** Before a query on other fields than `_id`, or sorted, during a bulk load: the collection's indexes are built now. */
  private indexBeforeQuery(name: string, filter: Filter, sort?: Record<string, 1 | -1>): void {
    const bulk = this.bulk;
    if (!bulk || !bulk.deferred.has(name)) return;
    if (Object.keys(filter).every((key) => key === '_id') && Object.keys(sort ?? {}).length === 0) return;
    bulk.deferred.delete(name);
    bulk.indexed.add(name);
    this.ready.delete(name);
    this.ensure(name);
  }

  /** Creates the collection's tables and indexes if missing, and brings its rows to its layout; answers its table's name. */
  ensure(name: string): string {
    const table = docTable(name);
    if (this.ready.has(name)) return table;
    // Another process defers them (a first start filling the store): it builds them at its end.
    const deferIndexes = this.bulk ? !this.bulk.indexed.has(name) : this.marked() === INDEXES_DEFERRED;
    const layout = this.layout(name);
    const t = quote(table);
    const wanted = new Map<string, string>();
    for (const declaration of layout.scalarIndexes) {
      const fields = Object.entries(declaration.keys);
      wanted.set(indexName(table, declaration), `CREATE INDEX IF NOT EXISTS ${quote(indexName(table, declaration))} ON ${t} (${fields.map(([path, direction]) => `${keyColumn(path)}${direction === -1 ? ' DESC' : ''}`).join(', ')})`);
    }
    if (!deferIndexes && this.isUpToDate(name, table, layout, wanted)) {
      // Found as wanted: no write, so a process that only reads never waits for the writer's lock.
      this.ready.add(name);
      return table;
    }
    // Schema changes commit at once, apart from any group of writes. Another process on the file may
    // be laying the same collection out (an upgrade, roles started together): this one waits for it,
    // then finds the work done, rather than failing at the usual busy timeout.
    this.db.pragma(`busy_timeout = ${SCHEMA_BUSY_TIMEOUT_MS}`);
    try {
      this.changeSchema(name, table, layout, wanted, deferIndexes);
    } finally {
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    }
    if (deferIndexes) this.bulk?.deferred.add(name);
    this.ready.add(name);
    return table;
  }

  private changeSchema(name: string, table: string, layout: Layout, wanted: ReadonlyMap<string, string>, deferIndexes: boolean): void {
    const t = quote(table);
    const keys = quote(keyTable(name));
    this.transaction(() => {
      this.db.exec(`
        CREATE TABLE IF NOT EXISTS ${t} (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL, plain INTEGER NOT NULL);
        CREATE INDEX IF NOT EXISTS ${quote(`${table}:irregular`)} ON ${t} (seq) WHERE plain = 0;
      `);
      if (layout.arrayPaths.size > 0) {
        this.db.exec(`
          CREATE TABLE IF NOT EXISTS ${keys} (path TEXT NOT NULL, key ANY, seq INTEGER NOT NULL);
          CREATE INDEX IF NOT EXISTS ${quote(`${keyTable(name)}:lookup`)} ON ${keys} (path, key, seq);
          CREATE INDEX IF NOT EXISTS ${quote(`${keyTable(name)}:seq`)} ON ${keys} (seq);
        `);
      }
      const stored = this.db.prepare('SELECT layout FROM collections WHERE name = ?').get(name) as { layout: string } | undefined;
      const relaid = stored?.layout !== layout.signature;
      // Indexes a read model no longer declares only slow its writes; after a change of layout, the
      // declared ones are made again on the new key columns (an index of the same name may be an old
      // expression index).
      const existing = this.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`).all(table) as { name: string }[];
      for (const { name: indexName } of existing) {
        if (indexName !== `${table}:irregular` && (relaid || !wanted.has(indexName))) this.db.exec(`DROP INDEX ${quote(indexName)}`);
      }
      if (relaid) {
        this.keyColumnsAsLaidOut(table, layout);
        this.relayout(name, layout);
        this.db.prepare('INSERT INTO collections (name, layout) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET layout = excluded.layout').run(name, layout.signature);
      }
      if (!deferIndexes) for (const sql of wanted.values()) this.db.exec(sql);
    }, { group: false });
  }

  /** Whether the collection's tables, indexes and rows are as its layout wants them. */
  private isUpToDate(name: string, table: string, layout: Layout, wanted: ReadonlyMap<string, string>): boolean {
    const objects = new Set(
      (this.db.prepare(`SELECT name FROM sqlite_master WHERE tbl_name IN (?, ?)`).all(table, keyTable(name)) as { name: string }[]).map((row) => row.name),
    );
    const needed = [table, `${table}:irregular`, ...wanted.keys(), ...(layout.arrayPaths.size > 0 ? [keyTable(name), `${keyTable(name)}:lookup`, `${keyTable(name)}:seq`] : [])];
    if (!needed.every((object) => objects.has(object))) return false;
    // Only our indexes and SQLite's own (the unique id's) on the table: nothing left to drop.
    if ([...objects].some((object) => object.startsWith(`${table}:`) && object !== `${table}:irregular` && !wanted.has(object))) return false;
    const stored = this.db.prepare('SELECT layout FROM collections WHERE name = ?').get(name) as { layout: string } | undefined;
    return stored?.layout === layout.signature;
  }

  /** Adds the key columns the layout wants, and drops those it no longer does (their indexes are gone by then). */
  private keyColumnsAsLaidOut(table: string, layout: Layout): void {
    const t = quote(table);
    const present = (this.db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table) as string[]).filter((c) => c.startsWith('k:'));
    const wanted = [...layout.scalarPaths].map(keyColumnName);
    for (const column of present) if (!wanted.includes(column)) this.db.exec(`ALTER TABLE ${t} DROP COLUMN ${quote(column)}`);
    for (const column of wanted) if (!present.includes(column)) this.db.exec(`ALTER TABLE ${t} ADD COLUMN ${quote(column)}`);
  }

  /** Recomputes every row's flag, key columns and array keys after the declarations changed, a thousand rows at a time. */
  private relayout(name: string, layout: Layout): void {
    this.answers.clearTable(docTable(name));
    const t = quote(docTable(name));
    const total = (this.db.prepare(`SELECT count(*) FROM ${t}`).pluck().get() as number);
    if (total > 0) this.onRelayout?.(name, total);
    const columns = ['plain', ...layout.keyColumns];
    const setKeys = this.db.prepare(`UPDATE ${t} SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE seq = ?`);
    if (layout.arrayPaths.size > 0) this.db.exec(`DELETE FROM ${quote(keyTable(name))}`);
    for (const rows of this.rowPages(docTable(name), 1000)) {
      for (const row of rows) {
        const doc = decode(row.doc);
        setKeys.run(...layout.rowValues(doc), row.seq);
        this.insertKeys(name, layout, row.seq, doc);
      }
    }
  }

  /** A table's rows in row order, a page at a time by the primary key: each page costs its own size. */
  private *rowPages(table: string, pageSize: number): Generator<Row[]> {
    const page = this.prepare(`SELECT seq, doc FROM ${quote(table)} WHERE seq > ? ORDER BY seq LIMIT ?`);
    for (let after = 0; ; ) {
      const rows = page.all(after, pageSize) as Row[];
      if (rows.length > 0) yield rows;
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1]!.seq;
    }
  }

  private insertKeys(name: string, layout: Layout, seq: number, doc: Document): void {
    if (layout.arrayPaths.size === 0) return;
    const insert = this.prepare(`INSERT INTO ${quote(keyTable(name))} (path, key, seq) VALUES (?, ?, ?)`);
    for (const path of layout.arrayPaths) {
      const seen = new Set<string>();
      for (const key of keysAt(doc, path.split('.'))) {
        const tag = Buffer.isBuffer(key) ? `b${key[0]}` : `${typeof key}:${key}`;
        if (seen.has(tag)) continue;
        seen.add(tag);
        insert.run(path, key, seq);
      }
    }
  }

  private deleteKeys(name: string, layout: Layout, seq: number): void {
    if (layout.arrayPaths.size > 0) this.prepare(`DELETE FROM ${quote(keyTable(name))} WHERE seq = ?`).run(seq);
  }

  seqOf(name: string, id: DocumentId): number | undefined {
    const row = this.prepare(this.sqlOf(name).seqById).get(idKey(id)) as { seq: number } | undefined;
    return row?.seq;
  }

  insert(name: string, doc: Document): void {
    this.irregular.delete(docTable(name));
    this.answers.clearTable(docTable(name));
    const layout = this.layout(name);
    const result = this.prepare(this.sqlOf(name).insert).run(idKey(doc._id), encode(doc), ...layout.rowValues(doc));
    this.insertKeys(name, layout, Number(result.lastInsertRowid), doc);
  }

  /**
   * Writes the whole document by `_id`, inserting it if absent, a replaced one keeping its row (its
   * natural order). Without array keys to maintain, one statement finds and writes the row.
   */
  put(name: string, doc: Document): void {
    const layout = this.layout(name);
    if (layout.arrayPaths.size > 0) {
      const seq = this.seqOf(name, doc._id);
      if (seq === undefined) this.insert(name, doc);
      else this.replace(name, seq, doc);
      return;
    }
    this.irregular.delete(docTable(name));
    this.answers.clearTable(docTable(name));
    this.prepare(this.sqlOf(name).upsert).run(idKey(doc._id), encode(doc), ...layout.rowValues(doc));
  }

  replace(name: string, seq: number, doc: Document): void {
    this.irregular.delete(docTable(name));
    this.answers.clearTable(docTable(name));
    const layout = this.layout(name);
    this.prepare(this.sqlOf(name).update).run(encode(doc), ...layout.rowValues(doc), seq);
    this.deleteKeys(name, layout, seq);
    this.insertKeys(name, layout, seq, doc);
  }

  remove(name: string, seq: number): void {
    this.irregular.delete(docTable(name));
    this.answers.clearTable(docTable(name));
    this.prepare(this.sqlOf(name).remove).run(seq);
    this.deleteKeys(name, this.layout(name), seq);
  }

  private plan(name: string, filter: Filter): FilterPlan {
    const layout = this.layout(name);
    const plan: FilterPlan = { exact: [], narrowing: [], residual: false, prefilter: [] };
    for (const [path, condition] of Object.entries(filter)) {
      if (path === '$or') {
        const clause = this.translateOr(name, condition);
        if (clause) plan.exact.push(clause);
        else plan.residual = true;
        continue;
      }
      const clause = layout.arrayPaths.has(path)
        ? translateArrayCondition(quote(keyTable(name)), path, condition)
        : layout.scalarPaths.has(path)
          ? translateCondition(path, condition)
          : undefined;
      if (!clause) {
        plan.residual = true;
        if (!layout.arrayPaths.has(path)) plan.prefilter.push(...jsonPrefilter(path, condition));
      } else if (layout.arrayPaths.has(path)) {
        plan.narrowing.push(clause);
        plan.residual = true;
      } else plan.exact.push(clause);
    }
    return plan;
  }

  /** `$or` of branches SQL evaluates wholly (log-in by user name or e-mail), else undefined. */
  private translateOr(name: string, branches: unknown): Clause | undefined {
    if (!Array.isArray(branches) || branches.length === 0) return undefined;
    const parts: Clause[] = [];
    for (const branch of branches) {
      if (!isPlainObject(branch) || Object.keys(branch).length === 0) return undefined;
      const plan = this.plan(name, branch);
      if (plan.residual || plan.narrowing.length > 0) return undefined;
      parts.push({ sql: plan.exact.map((c) => `(${c.sql})`).join(' AND '), params: plan.exact.flatMap((c) => c.params) });
    }
    return { sql: parts.map((p) => `(${p.sql})`).join(' OR '), params: parts.flatMap((p) => p.params) };
  }

  /**
   * Whether the table holds rows SQL cannot compare exactly. Remembered until this connection writes
   * the table or another connection commits (SQLite's data_version tells), since reads ask each time.
   */
  private hasIrregular(table: string): boolean {
    this.forgetOthersChanges();
    let known = this.irregular.get(table);
    if (known === undefined) {
      known = this.prepare(`SELECT 1 FROM ${quote(table)} WHERE plain = 0 LIMIT 1`).get() !== undefined;
      this.irregular.set(table, known);
    }
    return known;
  }

  /** ORDER BY for a sort SQL can do exactly (every key a declared scalar field), else undefined. */
  private orderBy(name: string, sort: Record<string, 1 | -1> | undefined): string | undefined {
    const keys = Object.entries(sort ?? {});
    const layout = this.layout(name);
    if (keys.some(([path]) => !layout.scalarPaths.has(path))) return undefined;
    // Ties keep natural (insertion) order, as mingo's stable sort keeps them; no tie survives _id.
    const terms = keys.map(([path, direction]) => `${keyColumn(path)}${direction === -1 ? ' DESC' : ''}`);
    if (!keys.some(([path]) => path === '_id')) terms.push('seq');
    return terms.join(', ');
  }

  /**
   * The table, with the index to search named when one declared index has more leading fields
   * pinned by the filter than any other: without statistics of the values, SQLite would rather take
   * an index that gives the order (a project's jobs newest first) and test the rest on every row
   * (`state` in two rare states) than search the narrower one and sort the few rows it gives.
   */
  private source(name: string, table: string, clauses: readonly Clause[]): string {
    const pinned = new Set(clauses.flatMap((c) => (c.pins ? [c.pins] : [])));
    if (pinned.size < 2) return quote(table);
    const ranked = this.layout(name).scalarIndexes.map((declaration) => {
      let leading = 0;
      for (const path of Object.keys(declaration.keys)) {
        if (!pinned.has(path)) break;
        leading++;
      }
      return { declaration, leading };
    });
    const best = Math.max(0, ...ranked.map((r) => r.leading));
    const winners = ranked.filter((r) => r.leading === best);
    return best >= 2 && winners.length === 1 ? `${quote(table)} INDEXED BY ${quote(indexName(table, winners[0]!.declaration))}` : quote(table);
  }

  private rows(name: string, table: string, clauses: Clause[], tail = 'ORDER BY seq', tailParams: unknown[] = []): Row[] {
    const where = clauses.length > 0 ? `WHERE ${clauses.map((c) => `(${c.sql})`).join(' AND ')}` : '';
    return this.prepare(`SELECT seq, doc FROM ${this.source(name, table, clauses)} ${where} ${tail}`).all(...clauses.flatMap((c) => c.params), ...tailParams) as Row[];
  }

  /**
   * The statement of a walk mingo decides row by row, or undefined where a quicker path answers (SQL
   * decides the whole filter), or none can walk (rows SQL cannot compare, an order SQL cannot give).
   * Every row the indexes give comes back, in the order asked (none for a count: SQLite would sort
   * every row before it gave the first), its document only where the narrowing on the JSON passes: a
   * column, not a condition, so that no single step runs through a million rows.
   */
  private walkOf(name: string, table: string, plan: FilterPlan, sort: FindOptions['sort'], counting: boolean): Walk | undefined {
    if (!plan.residual || this.hasIrregular(table)) return undefined;
    const orderBy = counting ? '' : this.orderBy(name, sort);
    if (orderBy === undefined) return undefined;
    // An array lookup is the narrowest start; the planner, without statistics, would rather take any
    // equality on an index (all projects not deleted) and test the lookup on each. mingo decides anyway.
    const clauses = [...plan.narrowing, ...(plan.narrowing.length > 0 ? [] : plan.exact)];
    const where = clauses.length > 0 ? `WHERE ${clauses.map((c) => `(${c.sql})`).join(' AND ')}` : '';
    const narrowed = plan.prefilter.length > 0 ? `CASE WHEN ${plan.prefilter.map((c) => `(${c.sql})`).join(' AND ')} THEN doc END` : 'doc';
    return {
      sql: `SELECT seq, ${narrowed} AS doc FROM ${this.source(name, table, clauses)} ${where} ${orderBy ? `ORDER BY ${orderBy}` : ''}`,
      params: [...plan.prefilter.flatMap((c) => c.params), ...clauses.flatMap((c) => c.params)],
    };
  }

  /** A walk on this connection; false when it went past `budget` rows (then the page is not whole). */
  private walkHere(walk: Walk, page: Page, budget: number): boolean {
    let rows = 0;
    for (const row of this.prepare(walk.sql).iterate(...walk.params) as IterableIterator<{ seq: number; doc: string | null }>) {
      if (++rows > budget) return false;
      if (page.offer(row.seq, row.doc)) break;
    }
    return true;
  }

  /** The one document a filter pinning `_id` can match, tested in JS: no SQL evaluation of its JSON. */
  private byId(table: string, filter: Filter): Found[] | undefined {
    const id = filter._id;
    if (typeof id !== 'string' && (typeof id !== 'number' || !Number.isFinite(id))) return undefined;
    const row = this.prepare(`SELECT seq, doc FROM ${quote(table)} WHERE id = ?`).get(idKey(id)) as Row | undefined;
    if (!row) return [];
    const doc = decode(row.doc);
    return matcherOf(filter)(doc) ? [{ seq: row.seq, doc }] : [];
  }

  /** What this connection remembers of the tables goes when another connection commits. */
  private forgetOthersChanges(): void {
    // Once per turn of the event loop: a request's several reads share one look (it was a tenth of a
    // project-information call). What another process commits meanwhile shows from the next turn, as
    // it would had the reads come a moment earlier; this connection's own writes clear what they touch.
    if (this.othersLookedAt) return;
    this.othersLookedAt = true;
    setImmediate(() => (this.othersLookedAt = false));
    const version = this.prepare('PRAGMA data_version').pluck().get() as number;
    if (version === this.seenVersion) return;
    this.irregular.clear();
    this.answers.clear();
    this.seenVersion = version;
  }

  /** Moves on with every write through this connection (each drops cached answers) and every commit of another. */
  changeMark(): number {
    this.forgetOthersChanges();
    return this.answers.generation;
  }

  /** A find for a caller: answered from the bounded cache when this exact query was answered since the table last changed. */
  read(name: string, filter: Filter, options: FindOptions): Document[] {
    return this.answer(name, filter, options, Number.POSITIVE_INFINITY)!;
  }

  /** read()'s answer, or undefined when its walk went past `budget` rows (nothing is kept then). */
  private answer(name: string, filter: Filter, options: FindOptions, budget: number): Document[] | undefined {
    const table = this.ensure(name);
    const id = onlyId(filter);
    this.forgetOthersChanges();
    if (id !== undefined) {
      if (options.skip) return [];
      // One row by its unique key. A document found is kept (frozen, see queryCache.ts); an absent one
      // is not, so a projection's first touch of a document (mostly a new one, absent) fills no entry.
      const rowKey = idKey(id);
      const key = this.answerCache ? `${table}\u0000id\u0000${rowKey}` : undefined;
      const kept = key === undefined ? undefined : this.answers.find(key);
      if (kept) return kept;
      const row = this.prepare(this.sqlOf(name).docById).get(rowKey) as { doc: string } | undefined;
      if (!row) return [];
      const docs = [decode(row.doc)];
      if (key !== undefined) this.answers.remember(table, key, { docs });
      return docs;
    }
    const key = this.answerCache ? this.answers.key(table, 'find', filter, options) : undefined;
    const cached = key === undefined ? undefined : this.answers.find(key);
    if (cached) return cached;
    const found = this.search(name, filter, options, budget);
    if (!found) return undefined;
    const docs = found.map((f) => f.doc);
    if (key !== undefined) this.answers.remember(table, key, { docs });
    return docs;
  }

  /** Whether a long walk may go on apart: on a file, outside a bulk load and a transaction (its writes would not show there). */
  private get walksApart(): boolean {
    return !this.db.memory && !this.bulk && this.depth === 0;
  }

  /**
   * A find for a caller, as read() answers it; a walk mingo decides row by row that is still going
   * after WALK_HERE_ROWS rows goes on apart (walkApart) instead of holding the event loop for all of it.
   */
  async readMany(name: string, filter: Filter, options: FindOptions): Promise<Document[]> {
    if (!this.walksApart) return this.read(name, filter, options);
    return this.answer(name, filter, options, this.walkHereRows) ?? ((await this.walkApart(name, filter, options, false)) as Document[]);
  }

  /** A count for a caller, as readCount() answers it; a long walk goes on apart as in readMany. */
  async readManyCount(name: string, filter: Filter): Promise<number> {
    if (!this.walksApart) return this.readCount(name, filter);
    return this.countAnswer(name, filter, this.walkHereRows) ?? ((await this.walkApart(name, filter, {}, true)) as number);
  }

  private scans = 0;

  /**
   * A long walk on a read-only connection of its own, a slice at a time: the event loop serves other
   * requests between slices (a filtered listing over a million samples held it for seconds). The
   * group of writes is committed first, so the walk sees every write made here. Its answer is kept
   * only if nothing changed while it read.
   */
  private async walkApart(name: string, filter: Filter, options: FindOptions, counting: boolean): Promise<Document[] | number> {
    const table = this.ensure(name);
    const walk = this.walkOf(name, table, this.plan(name, filter), options.sort, counting);
    // Only a walk gets here; should the store have changed its mind meanwhile, the whole walk runs here.
    if (!walk) return counting ? this.readCount(name, filter) : this.read(name, filter, options);
    this.forgetOthersChanges();
    const generation = this.answers.generation;
    const page = new Page(matcherOf(filter), options.limit, options.skip, counting);
    while (this.scans >= MAX_SCANS) await new Promise((resolve) => setTimeout(resolve, 20));
    this.scans += 1;
    this.commitGroup();
    const db = new Database(this.db.name, { readonly: true, fileMustExist: true, timeout: this.busyTimeoutMs });
    try {
      let sliceEnds = performance.now() + this.scanSliceMs;
      let rows = 0;
      for (const row of db.prepare(walk.sql).iterate(...walk.params) as IterableIterator<{ seq: number; doc: string | null }>) {
        if (++rows % 64 === 0 && performance.now() >= sliceEnds) {
          // The statement stays open on this connection alone, which nothing else uses meanwhile.
          await new Promise((resolve) => setImmediate(resolve));
          sliceEnds = performance.now() + this.scanSliceMs;
        }
        if (page.offer(row.seq, row.doc)) break;
      }
    } finally {
      db.close();
      this.scans -= 1;
    }
    // Another's commit meanwhile may be missing from it: then it is not kept.
    this.forgetOthersChanges();
    const key = !this.answerCache || this.answers.generation !== generation ? undefined : counting ? this.answers.key(table, 'count', filter) : this.answers.key(table, 'find', filter, options);
    if (counting) {
      if (key !== undefined) this.answers.remember(table, key, { count: page.counted });
      return page.counted;
    }
    const docs = page.found.map((f) => f.doc);
    if (key !== undefined) this.answers.remember(table, key, { docs });
    return docs;
  }

  readCount(name: string, filter: Filter): number {
    return this.countAnswer(name, filter, Number.POSITIVE_INFINITY)!;
  }

  /** readCount()'s answer, or undefined when its walk went past `budget` rows (nothing is kept then). */
  private countAnswer(name: string, filter: Filter, budget: number): number | undefined {
    const table = this.ensure(name);
    this.forgetOthersChanges();
    const key = this.answerCache ? this.answers.key(table, 'count', filter) : undefined;
    const cached = key === undefined ? undefined : this.answers.count(key);
    if (cached !== undefined) return cached;
    const count = this.count(name, filter, budget);
    if (count === undefined) return undefined;
    if (key !== undefined) this.answers.remember(table, key, { count });
    return count;
  }

  /** The matching documents with their rows, sorted and paged as asked. */
  matching(name: string, filter: Filter, options: FindOptions): Found[] {
    return this.search(name, filter, options, Number.POSITIVE_INFINITY)!;
  }

  /** matching()'s answer, or undefined when its walk went past `budget` rows. */
  private search(name: string, filter: Filter, options: FindOptions, budget: number): Found[] | undefined {
    const table = this.ensure(name);
    const single = this.byId(table, filter);
    if (single) return options.skip ? single.slice(options.skip) : single;
    this.indexBeforeQuery(name, filter, options.sort);
    const plan = this.plan(name, filter);
    const irregular = this.hasIrregular(table);
    const orderBy = this.orderBy(name, options.sort);
    if (!plan.residual && !irregular && orderBy !== undefined) {
      const rows = this.rows(name, table, plan.exact, `ORDER BY ${orderBy} ${limitClause(options.limit)}`, [options.skip ?? 0]);
      return rows.map((row) => ({ seq: row.seq, doc: decode(row.doc) }));
    }
    // Read a row at a time in the order asked, mingo testing each: only the page is kept, and the walk
    // ends once it is full. A listing filtered on a field no index holds, over a million samples, held
    // every document decoded at once (2.8 GB) before it kept twenty.
    const walk = this.walkOf(name, table, plan, options.sort, false);
    if (walk) {
      const page = new Page(matcherOf(filter), options.limit, options.skip, false);
      return this.walkHere(walk, page, budget) ? page.found : undefined;
    }
    // Rows SQL cannot compare, or an order it cannot give: mingo has them all.
    const exact = plan.narrowing.length > 0 ? [] : plan.exact;
    const plainRows = this.rows(name, table, [...plan.narrowing, ...exact, ...plan.prefilter, ...(irregular ? [{ sql: 'plain = 1', params: [] }] : [])]);
    const otherRows = irregular ? this.rows(name, table, [...plan.narrowing, ...plan.prefilter, { sql: 'plain = 0', params: [] }]) : [];
    const rows = otherRows.length === 0 ? plainRows : [...plainRows, ...otherRows].sort((a, b) => a.seq - b.seq);
    const seqs = new Map<Document, number>();
    let docs = rows.map((row) => {
      const doc = decode(row.doc);
      seqs.set(doc, row.seq);
      return doc;
    });
    const test = equalityMatcher(filter);
    const sorted = options.sort && Object.keys(options.sort).length > 0;
    if (test && !sorted) {
      // No mingo at all for the projections' guarded writes: its setup costs more than the write.
      const start = options.skip ?? 0;
      const matches = docs.filter(test);
      return (options.limit ? matches.slice(start, start + options.limit) : matches.slice(start)).map((doc) => ({ seq: seqs.get(doc)!, doc }));
    }
    if (test) docs = docs.filter(test);
    let cursor = mingoFind<Document>(docs, test ? {} : filter);
    if (options.sort && Object.keys(options.sort).length > 0) cursor = cursor.sort(options.sort);
    if (options.skip) cursor = cursor.skip(options.skip);
    if (options.limit) cursor = cursor.limit(options.limit);
    // mingo hands back the very objects it was given, which maps each to its row.
    return cursor.all().map((doc) => ({ seq: seqs.get(doc)!, doc }));
  }

  /** The count of the matching documents, or undefined when its walk went past `budget` rows. */
  private count(name: string, filter: Filter, budget: number): number | undefined {
    const table = this.ensure(name);
    const single = this.byId(table, filter);
    if (single) return single.length;
    this.indexBeforeQuery(name, filter);
    const plan = this.plan(name, filter);
    if (!plan.residual && !this.hasIrregular(table)) {
      const where = plan.exact.length > 0 ? `WHERE ${plan.exact.map((c) => `(${c.sql})`).join(' AND ')}` : '';
      return (this.prepare(`SELECT count(*) AS n FROM ${this.source(name, table, plan.exact)} ${where}`).get(...plan.exact.flatMap((c) => c.params)) as { n: number }).n;
    }
    // Counted a row at a time: no document is kept.
    const walk = this.walkOf(name, table, plan, undefined, true);
    if (!walk) return this.matching(name, filter, {}).length;
    const page = new Page(matcherOf(filter), undefined, undefined, true);
    return this.walkHere(walk, page, budget) ? page.counted : undefined;
  }

  /** Applies the ops in order, then stores the checkpoints, in one transaction. */
  async commit(ops: readonly WriteOp[], checkpoints: readonly CheckpointWrite[]): Promise<void> {
    for (const op of ops) {
      assertCollectionName(op.collection);
      const id = op.kind === 'put' ? op.doc._id : op.id;
      if (typeof id !== 'string' && (typeof id !== 'number' || !Number.isFinite(id))) throw new Error(`A committed document's _id must be a string or a finite number, got ${JSON.stringify(id)}`);
    }
    this.transaction(() => {
      for (const op of ops) {
        // Written at once (encoded, keyed): no copy of the document is kept, so none is made.
        if (op.kind === 'put') this.put(op.collection, op.doc);
        else {
          const seq = this.seqOf(op.collection, op.id);
          if (seq !== undefined) this.remove(op.collection, seq);
        }
      }
      for (const { name, position, store } of checkpoints) this.writeCheckpoint(name, position, store);
    });
  }

  async getCheckpoint(name: string): Promise<bigint | undefined> {
    return (await this.readCheckpoint(name))?.position;
  }

  async readCheckpoint(name: string): Promise<Checkpoint | undefined> {
    const row = this.prepare('SELECT position, store FROM checkpoints WHERE name = ?').get(name) as CheckpointRow | undefined;
    // A checkpoint commits with the changes it covers: a caller that saw it (waiting for its own write
    // from another process) must read those changes in this very turn, so look again after it.
    this.othersLookedAt = false;
    this.forgetOthersChanges();
    return row && checkpointOf(row);
  }

  async setCheckpoint(name: string, position: bigint, store?: string): Promise<void> {
    this.transaction(() => this.writeCheckpoint(name, position, store));
  }

  private writeCheckpoint(name: string, position: bigint, store: string | undefined): void {
    // Decimal text: SQLite's integers stop at 2^63, positions need not.
    this.prepare('INSERT INTO checkpoints (name, position, store) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position, store = excluded.store').run(
      name,
      position.toString(),
      store ?? null,
    );
  }

  /** In row order (seq), a page by its primary key: no sort, no scan of what came before. */
  async *walk(name: string, pageSize: number): AsyncIterable<Document[]> {
    for (const rows of this.rowPages(this.ensure(name), pageSize)) yield rows.map((row) => decode(row.doc));
  }

  async dropAll(): Promise<void> {
    this.dropEverything();
  }

  private dropEverything(): void {
    this.transaction(() => {
      const tables = this.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE 'c:%' OR name LIKE 'k:%')`).all() as { name: string }[];
      for (const { name } of tables) this.db.exec(`DROP TABLE ${quote(name)}`);
      this.db.exec('DELETE FROM collections; DELETE FROM checkpoints;');
    });
    this.statements.clear();
    this.ready.clear();
    this.irregular.clear();
    this.answers.clear();
    for (const name of this.layouts.keys()) this.ensure(name);
  }

  /** The query plan SQLite picks for a find, one line per step: what the index tests read. */
  explainFind(name: string, filter: Filter, options: FindOptions = {}): { pushedDown: boolean; plan: string[] } {
    const table = this.ensure(name);
    this.indexBeforeQuery(name, filter, options.sort);
    const plan = this.plan(name, filter);
    const orderBy = this.orderBy(name, options.sort);
    const pushedDown = !plan.residual && orderBy !== undefined;
    const clauses = pushedDown ? plan.exact : plan.narrowing.length > 0 ? plan.narrowing : plan.exact;
    const where = clauses.length > 0 ? `WHERE ${clauses.map((c) => `(${c.sql})`).join(' AND ')}` : '';
    const tail = pushedDown ? `ORDER BY ${orderBy} ${limitClause(options.limit)}` : 'ORDER BY seq';
    const params = [...clauses.flatMap((c) => c.params), ...(pushedDown ? [options.skip ?? 0] : [])];
    const steps = this.db.prepare(`EXPLAIN QUERY PLAN SELECT seq, doc FROM ${this.source(name, table, clauses)} ${where} ${tail}`).all(...params) as { detail: string }[];
    return { pushedDown, plan: steps.map((s) => s.detail) };
  }

  /** The query plan SQLite picks for a count. */
  explainCount(name: string, filter: Filter): string[] {
    const table = this.ensure(name);
    this.indexBeforeQuery(name, filter);
    const plan = this.plan(name, filter);
    const clauses = plan.residual ? (plan.narrowing.length > 0 ? plan.narrowing : plan.exact) : plan.exact;
    const where = clauses.length > 0 ? `WHERE ${clauses.map((c) => `(${c.sql})`).join(' AND ')}` : '';
    const steps = this.db.prepare(`EXPLAIN QUERY PLAN SELECT count(*) FROM ${this.source(name, table, clauses)} ${where}`).all(...clauses.flatMap((c) => c.params)) as { detail: string }[];
    return steps.map((s) => s.detail);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      this.commitGroup();
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
