// The reads a caller makes (find and count), answered from the bounded cache of answers when this
// exact query was answered since the table last changed (queryCache.ts), else by the queries
// (queries.ts); a long walk goes on apart (walks.ts) rather than hold the event loop for all of it.
import { matcherOf } from '../documents/equalityMatcher';
import type { QueryCache } from '../queryCache';
import type { Document, Filter, FindOptions } from '../readStore';
import type { Commits } from './commits';
import { decode } from './documentJson';
import { onlyId } from './filterSql';
import { idKey } from './indexKeys';
import type { LoadState } from './bulkLoad';
import type { Queries } from './queries';
import type { ReadCaches } from './readCaches';
import type { Statements } from './statements';
import type { Tables } from './tableLayout';
import { Page, type WalksApart } from './walks';

export interface CachedReadsOptions {
  /** Keep answers (SqliteReadStoreOptions.answerCache). */
  answerCache: boolean;
  /** Rows a caller's walk reads on the store's own connection before it goes on apart. */
  walkHereRows: number;
  /** Whether the store's file can be opened again for a walk apart (not `:memory:`). */
  onFile: boolean;
}

export class CachedReads {
  constructor(
    private readonly tables: Tables,
    private readonly statements: Statements,
    private readonly caches: ReadCaches,
    private readonly queries: Queries,
    private readonly walksApart: WalksApart,
    private readonly commits: Commits,
    private readonly load: LoadState,
    private readonly options: CachedReadsOptions,
  ) {}

  private get answers(): QueryCache {
    return this.caches.answers;
  }

  /** A find for a caller: answered from the bounded cache when this exact query was answered since the table last changed. */
  read(name: string, filter: Filter, options: FindOptions): Document[] {
    return this.answer(name, filter, options, Number.POSITIVE_INFINITY)!;
  }

  /** read()'s answer, or undefined when its walk went past `budget` rows (nothing is kept then). */
  private answer(name: string, filter: Filter, options: FindOptions, budget: number): Document[] | undefined {
    const table = this.tables.ensure(name);
    const id = onlyId(filter);
    this.caches.forgetOthersChanges();
    if (id !== undefined) {
      if (options.skip) return [];
      // One row by its unique key. A document found is kept (frozen, see queryCache.ts); an absent one
      // is not, so a projection's first touch of a document (mostly a new one, absent) fills no entry.
      const rowKey = idKey(id);
      const key = this.options.answerCache ? `${table}\u0000id\u0000${rowKey}` : undefined;
      const kept = key === undefined ? undefined : this.answers.find(key);
      if (kept) return kept;
      const row = this.statements.prepare(this.tables.sqlOf(name).docById).get(rowKey) as { doc: string } | undefined;
      if (!row) return [];
      const docs = [decode(row.doc)];
      if (key !== undefined) this.answers.remember(table, key, { docs });
      return docs;
    }
    const key = this.options.answerCache ? this.answers.key(table, 'find', filter, options) : undefined;
    const cached = key === undefined ? undefined : this.answers.find(key);
    if (cached) return cached;
    const found = this.queries.search(name, filter, options, budget);
    if (!found) return undefined;
    const docs = found.map((f) => f.doc);
    if (key !== undefined) this.answers.remember(table, key, { docs });
    return docs;
  }

  /** Whether a long walk may go on apart: on a file, outside a bulk load and a transaction (its writes would not show there). */
  private get walkMayGoApart(): boolean {
    return this.options.onFile && !this.load.current && !this.commits.writing;
  }

  /**
   * A find for a caller, as read() answers it; a walk mingo decides row by row that is still going
   * after walkHereRows rows goes on apart (walkApart) instead of holding the event loop for all of it.
   */
  async readMany(name: string, filter: Filter, options: FindOptions): Promise<Document[]> {
    if (!this.walkMayGoApart) return this.read(name, filter, options);
    return this.answer(name, filter, options, this.options.walkHereRows) ?? ((await this.walkApart(name, filter, options, false)) as Document[]);
  }

  /** A count for a caller, as readCount() answers it; a long walk goes on apart as in readMany. */
  async readManyCount(name: string, filter: Filter): Promise<number> {
    if (!this.walkMayGoApart) return this.readCount(name, filter);
    return this.countAnswer(name, filter, this.options.walkHereRows) ?? ((await this.walkApart(name, filter, {}, true)) as number);
  }

  /** A long walk on a read-only connection of its own (WalksApart). Its answer is kept only if nothing changed while it read. */
  private async walkApart(name: string, filter: Filter, options: FindOptions, counting: boolean): Promise<Document[] | number> {
    const table = this.tables.ensure(name);
    const walk = this.queries.walkOf(name, table, this.queries.plan(name, filter), options.sort, counting);
    // Only a walk gets here; should the store have changed its mind meanwhile, the whole walk runs here.
    if (!walk) return counting ? this.readCount(name, filter) : this.read(name, filter, options);
    this.caches.forgetOthersChanges();
    const generation = this.answers.generation;
    const page = new Page(matcherOf(filter), options.limit, options.skip, counting);
    await this.walksApart.run(walk, page);
    // Another's commit meanwhile may be missing from it: then it is not kept.
    this.caches.forgetOthersChanges();
    const key = !this.options.answerCache || this.answers.generation !== generation ? undefined : counting ? this.answers.key(table, 'count', filter) : this.answers.key(table, 'find', filter, options);
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
    const table = this.tables.ensure(name);
    this.caches.forgetOthersChanges();
    const key = this.options.answerCache ? this.answers.key(table, 'count', filter) : undefined;
    const cached = key === undefined ? undefined : this.answers.count(key);
    if (cached !== undefined) return cached;
    const count = this.queries.count(name, filter, budget);
    if (count === undefined) return undefined;
    if (key !== undefined) this.answers.remember(table, key, { count });
    return count;
  }
}
