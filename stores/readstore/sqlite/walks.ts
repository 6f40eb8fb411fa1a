// Walks over many rows without holding them all: a query mingo decides row by row keeps only the
// page asked for (Page); a long one goes on apart, on a read-only connection of its own, a slice at
// a time, so the event loop serves other requests meanwhile (WalksApart); a whole table is read a
// page at a time by its primary key (rowPages).
import Database from 'better-sqlite3';
import type { Document } from '../readStore';
import { decode } from './documentJson';
import type { Statements } from './statements';
import { quote } from './tableNames';

export interface Row {
  seq: number;
  doc: string;
}

/** A document with its row. */
export interface Found {
  seq: number;
  doc: Document;
}

/** A walk's statement (queries.ts, walkOf): its rows carry a document only where the JSON narrowing passes. */
export interface Walk {
  sql: string;
  params: unknown[];
}

/** What a walk keeps of the rows it is offered: the page asked for (skip, then up to limit), or their count. */
export class Page {
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

/** A walk on the store's own connection; false when it went past `budget` rows (then the page is not whole). */
export function walkHere(statements: Statements, walk: Walk, page: Page, budget: number): boolean {
  let rows = 0;
  for (const row of statements.prepare(walk.sql).iterate(...walk.params) as IterableIterator<{ seq: number; doc: string | null }>) {
    if (++rows > budget) return false;
    if (page.offer(row.seq, row.doc)) break;
  }
  return true;
}

/** A table's rows in row order, a page at a time by the primary key: each page costs its own size. */
export function* rowPages(statements: Statements, table: string, pageSize: number): Generator<Row[]> {
  const page = statements.prepare(`SELECT seq, doc FROM ${quote(table)} WHERE seq > ? ORDER BY seq LIMIT ?`);
  for (let after = 0; ; ) {
    const rows = page.all(after, pageSize) as Row[];
    if (rows.length > 0) yield rows;
    if (rows.length < pageSize) return;
    after = rows[rows.length - 1]!.seq;
  }
}

/** Walks apart at once, each on a connection of its own; more wait their turn. */
const MAX_SCANS = 4;

export interface WalksApartOptions {
  /** The store's file (a walk apart needs one: not `:memory:`). */
  file: string;
  busyTimeoutMs: number;
  /** How long a walk apart works before it lets the event loop serve others. */
  scanSliceMs: number;
  /** Commits the store's open group of writes, so that the walk sees them. */
  commitGroup: () => void;
}

export class WalksApart {
  private scans = 0;

  constructor(private readonly options: WalksApartOptions) {}

  /**
   * Offers the walk's rows to the page on a read-only connection of its own, a slice at a time: the
   * event loop serves other requests between slices (a filtered listing over a million samples held
   * it for seconds). The group of writes is committed first, so the walk sees every write made here.
   */
  async run(walk: Walk, page: Page): Promise<void> {
    while (this.scans >= MAX_SCANS) await new Promise((resolve) => setTimeout(resolve, 20));
    this.scans += 1;
    // Whatever fails from here (the commit, opening the connection) gives the walk's turn back.
    let db: Database.Database | undefined;
    try {
      this.options.commitGroup();
      db = new Database(this.options.file, { readonly: true, fileMustExist: true, timeout: this.options.busyTimeoutMs });
      let sliceEnds = performance.now() + this.options.scanSliceMs;
      let rows = 0;
      for (const row of db.prepare(walk.sql).iterate(...walk.params) as IterableIterator<{ seq: number; doc: string | null }>) {
        if (++rows % 64 === 0 && performance.now() >= sliceEnds) {
          // The statement stays open on this connection alone, which nothing else uses meanwhile.
          await new Promise((resolve) => setImmediate(resolve));
          sliceEnds = performance.now() + this.options.scanSliceMs;
        }
        if (page.offer(row.seq, row.doc)) break;
      }
    } finally {
      db?.close();
      this.scans -= 1;
    }
  }
}
