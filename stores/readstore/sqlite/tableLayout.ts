// Each collection's tables laid out as its declarations want them: the documents' table with one key
// column per declared scalar field and the declared indexes on them, the side table of array keys,
// and, when the declarations (or the store's layout) changed since the file was written, every row's
// flag and keys computed again (relayout). Checked once per collection and connection.
import type Database from 'better-sqlite3';
import type { ReadModelIndexes } from '../indexDeclarations';
import { insertArrayKeys } from './arrayKeys';
import type { Commits } from './commits';
import { decode } from './documentJson';
import type { ReadCaches } from './readCaches';
import { Layout } from './rowLayout';
import type { Statements } from './statements';
import { docTable, indexName, keyColumn, keyColumnName, keyTable, quote } from './tableNames';
import { rowPages } from './walks';

/** How long a change of a collection's tables waits for another process's: laying a large one out takes a while. */
const SCHEMA_BUSY_TIMEOUT_MS = 10 * 60 * 1000;

/** Whether a collection's declared indexes wait to be built (bulkLoad.ts). */
export interface IndexDeferral {
  defersIndexesOf(name: string): boolean;
  /** The collection's tables were laid out without their declared indexes. */
  deferred(name: string): void;
}

export interface TablesOptions {
  /** How long a write waits for another connection's lock, restored after a change of tables. */
  busyTimeoutMs: number;
  /** Told before the rows of a collection are laid out anew. */
  onRelayout: ((collection: string, rows: number) => void) | undefined;
}

/** The texts of a collection's row statements. */
export interface RowSql {
  docById: string;
  seqById: string;
  insert: string;
  upsert: string;
  update: string;
  remove: string;
}

/** The store's own tables, made once per file: the checkpoints, and each collection's layout signature. */
export function createStoreTables(db: Database.Database): void {
  const tables = db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('checkpoints', 'collections')`).get() as { n: number };
  if (tables.n < 2) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position TEXT NOT NULL, store TEXT) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS collections (name TEXT PRIMARY KEY, layout TEXT NOT NULL) WITHOUT ROWID;
    `);
  }
}

export class Tables {
  private readonly layouts = new Map<string, Layout>();
  private readonly empty = new Layout([]);
  /** Collections whose tables exist and match their layout, in this connection. */
  private readonly ready = new Set<string>();
  private readonly rowSql = new Map<string, RowSql>();

  constructor(
    private readonly db: Database.Database,
    indexes: ReadModelIndexes,
    private readonly statements: Statements,
    private readonly commits: Commits,
    private readonly caches: ReadCaches,
    private readonly deferral: IndexDeferral,
    private readonly options: TablesOptions,
  ) {
    for (const [name, declarations] of Object.entries(indexes)) this.layouts.set(name, new Layout(declarations));
  }

  /** The collections with declared indexes. */
  declared(): Iterable<string> {
    return this.layouts.keys();
  }

  layout(name: string): Layout {
    return this.layouts.get(name) ?? this.empty;
  }

  /**
   * The texts of a collection's row statements, made once: the statement cache is keyed by text, and
   * a text built anew for every row is hashed anew. Ensures the collection's table first.
   */
  sqlOf(name: string): RowSql {
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

  /** Forgets which collections were found laid out (after a rollback, or indexes dropped): each is checked again. */
  forget(): void {
    this.ready.clear();
  }

  /** Checks the collection's tables again, building the indexes a deferral left out. */
  ensureAgain(name: string): void {
    this.ready.delete(name);
    this.ensure(name);
  }

  ensureDeclared(): void {
    for (const name of this.layouts.keys()) this.ensure(name);
  }

  /** Creates the collection's tables and indexes if missing, and brings its rows to its layout; answers its table's name. */
  ensure(name: string): string {
    const table = docTable(name);
    if (this.ready.has(name)) return table;
    const deferIndexes = this.deferral.defersIndexesOf(name);
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
      this.db.pragma(`busy_timeout = ${this.options.busyTimeoutMs}`);
    }
    if (deferIndexes) this.deferral.deferred(name);
    this.ready.add(name);
    return table;
  }

  /** Drops every collection and checkpoint, then makes the declared collections' tables again. */
  dropEverything(): void {
    this.commits.transaction(() => {
      const tables = this.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE 'c:%' OR name LIKE 'k:%')`).all() as { name: string }[];
      for (const { name } of tables) this.db.exec(`DROP TABLE ${quote(name)}`);
      this.db.exec('DELETE FROM collections; DELETE FROM checkpoints;');
    });
    this.statements.clear();
    this.ready.clear();
    this.caches.clear();
    this.ensureDeclared();
  }

  private changeSchema(name: string, table: string, layout: Layout, wanted: ReadonlyMap<string, string>, deferIndexes: boolean): void {
    const t = quote(table);
    const keys = quote(keyTable(name));
    this.commits.transaction(() => {
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
    this.caches.answers.clearTable(docTable(name));
    const t = quote(docTable(name));
    const total = (this.db.prepare(`SELECT count(*) FROM ${t}`).pluck().get() as number);
    if (total > 0) this.options.onRelayout?.(name, total);
    const columns = ['plain', ...layout.keyColumns];
    const setKeys = this.db.prepare(`UPDATE ${t} SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE seq = ?`);
    if (layout.arrayPaths.size > 0) this.db.exec(`DELETE FROM ${quote(keyTable(name))}`);
    for (const rows of rowPages(this.statements, docTable(name), 1000)) {
      for (const row of rows) {
        const doc = decode(row.doc);
        setKeys.run(...layout.rowValues(doc), row.seq);
        insertArrayKeys(this.statements, name, layout, row.seq, doc);
      }
    }
  }
}
