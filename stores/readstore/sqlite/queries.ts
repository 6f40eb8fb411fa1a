// A query's path through the rows: one row by its `_id`; SQL alone when it decides the filter, the
// order and the page exactly; a walk mingo decides row by row, keeping only the page; else every
// candidate row read and mingo deciding on all of them (rows SQL cannot compare, an order it
// cannot give). Answers are the memory store's (mingo's) on every path.
import { find as mingoFind } from 'mingo';
import { equalityMatcher, matcherOf } from '../documents/equalityMatcher';
import type { Document, Filter, FindOptions } from '../readStore';
import type { BulkLoad } from './bulkLoad';
import { decode } from './documentJson';
import { indexedSource, limitClause, orderBy, planFilter, whereClause, type Clause, type FilterPlan } from './filterSql';
import { idKey } from './indexKeys';
import type { ReadCaches } from './readCaches';
import type { Statements } from './statements';
import type { Tables } from './tableLayout';
import { quote } from './tableNames';
import { Page, walkHere, type Found, type Row, type Walk } from './walks';

export class Queries {
  constructor(
    private readonly tables: Tables,
    private readonly statements: Statements,
    private readonly caches: ReadCaches,
    private readonly bulkLoad: BulkLoad,
  ) {}

  plan(name: string, filter: Filter): FilterPlan {
    return planFilter(this.tables.layout(name), name, filter);
  }

  private orderBy(name: string, sort: FindOptions['sort']): string | undefined {
    return orderBy(this.tables.layout(name), sort);
  }

  private source(name: string, table: string, clauses: readonly Clause[]): string {
    return indexedSource(this.tables.layout(name), table, clauses);
  }

  private rows(name: string, table: string, clauses: Clause[], tail = 'ORDER BY seq', tailParams: unknown[] = []): Row[] {
    return this.statements.prepare(`SELECT seq, doc FROM ${this.source(name, table, clauses)} ${whereClause(clauses)} ${tail}`).all(...clauses.flatMap((c) => c.params), ...tailParams) as Row[];
  }

  /**
   * The statement of a walk mingo decides row by row, or undefined where a quicker path answers (SQL
   * decides the whole filter), or none can walk (rows SQL cannot compare, an order SQL cannot give).
   * Every row the indexes give comes back, in the order asked (none for a count: SQLite would sort
   * every row before it gave the first), its document only where the narrowing on the JSON passes: a
   * column, not a condition, so that no single step runs through a million rows.
   */
  walkOf(name: string, table: string, plan: FilterPlan, sort: FindOptions['sort'], counting: boolean): Walk | undefined {
    if (!plan.residual || this.caches.hasIrregular(table)) return undefined;
    const orderBy = counting ? '' : this.orderBy(name, sort);
    if (orderBy === undefined) return undefined;
    // An array lookup is the narrowest start; the planner, without statistics, would rather take any
    // equality on an index (all projects not deleted) and test the lookup on each. mingo decides anyway.
    const clauses = [...plan.narrowing, ...(plan.narrowing.length > 0 ? [] : plan.exact)];
    const narrowed = plan.prefilter.length > 0 ? `CASE WHEN ${plan.prefilter.map((c) => `(${c.sql})`).join(' AND ')} THEN doc END` : 'doc';
    return {
      sql: `SELECT seq, ${narrowed} AS doc FROM ${this.source(name, table, clauses)} ${whereClause(clauses)} ${orderBy ? `ORDER BY ${orderBy}` : ''}`,
      params: [...plan.prefilter.flatMap((c) => c.params), ...clauses.flatMap((c) => c.params)],
    };
  }

  /** The one document a filter pinning `_id` can match, tested in JS: no SQL evaluation of its JSON. */
  private byId(table: string, filter: Filter): Found[] | undefined {
    const id = filter._id;
    if (typeof id !== 'string' && (typeof id !== 'number' || !Number.isFinite(id))) return undefined;
    const row = this.statements.prepare(`SELECT seq, doc FROM ${quote(table)} WHERE id = ?`).get(idKey(id)) as Row | undefined;
    if (!row) return [];
    const doc = decode(row.doc);
    return matcherOf(filter)(doc) ? [{ seq: row.seq, doc }] : [];
  }

  /** The matching documents with their rows, sorted and paged as asked. */
  matching(name: string, filter: Filter, options: FindOptions): Found[] {
    return this.search(name, filter, options, Number.POSITIVE_INFINITY)!;
  }

  /** matching()'s answer, or undefined when its walk went past `budget` rows. */
  search(name: string, filter: Filter, options: FindOptions, budget: number): Found[] | undefined {
    const table = this.tables.ensure(name);
    const single = this.byId(table, filter);
    if (single) return options.skip ? single.slice(options.skip) : single;
    this.bulkLoad.indexBeforeQuery(name, filter, options.sort);
    const plan = this.plan(name, filter);
    const irregular = this.caches.hasIrregular(table);
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
      return walkHere(this.statements, walk, page, budget) ? page.found : undefined;
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
  count(name: string, filter: Filter, budget: number): number | undefined {
    const table = this.tables.ensure(name);
    const single = this.byId(table, filter);
    if (single) return single.length;
    this.bulkLoad.indexBeforeQuery(name, filter);
    const plan = this.plan(name, filter);
    if (!plan.residual && !this.caches.hasIrregular(table)) {
      return (this.statements.prepare(`SELECT count(*) AS n FROM ${this.source(name, table, plan.exact)} ${whereClause(plan.exact)}`).get(...plan.exact.flatMap((c) => c.params)) as { n: number }).n;
    }
    // Counted a row at a time: no document is kept.
    const walk = this.walkOf(name, table, plan, undefined, true);
    if (!walk) return this.matching(name, filter, {}).length;
    const page = new Page(matcherOf(filter), undefined, undefined, true);
    return walkHere(this.statements, walk, page, budget) ? page.counted : undefined;
  }

  /** The query plan SQLite picks for a find, one line per step: what the index tests read. */
  explainFind(name: string, filter: Filter, options: FindOptions = {}): { pushedDown: boolean; plan: string[] } {
    const table = this.tables.ensure(name);
    this.bulkLoad.indexBeforeQuery(name, filter, options.sort);
    const plan = this.plan(name, filter);
    const orderBy = this.orderBy(name, options.sort);
    const pushedDown = !plan.residual && orderBy !== undefined;
    const clauses = pushedDown ? plan.exact : plan.narrowing.length > 0 ? plan.narrowing : plan.exact;
    const tail = pushedDown ? `ORDER BY ${orderBy} ${limitClause(options.limit)}` : 'ORDER BY seq';
    const params = [...clauses.flatMap((c) => c.params), ...(pushedDown ? [options.skip ?? 0] : [])];
    const steps = this.statements.once(`EXPLAIN QUERY PLAN SELECT seq, doc FROM ${this.source(name, table, clauses)} ${whereClause(clauses)} ${tail}`).all(...params) as { detail: string }[];
    return { pushedDown, plan: steps.map((s) => s.detail) };
  }

  /** The query plan SQLite picks for a count. */
  explainCount(name: string, filter: Filter): string[] {
    const table = this.tables.ensure(name);
    this.bulkLoad.indexBeforeQuery(name, filter);
    const plan = this.plan(name, filter);
    const clauses = plan.residual ? (plan.narrowing.length > 0 ? plan.narrowing : plan.exact) : plan.exact;
    const steps = this.statements.once(`EXPLAIN QUERY PLAN SELECT count(*) FROM ${this.source(name, table, clauses)} ${whereClause(clauses)}`).all(...clauses.flatMap((c) => c.params)) as { detail: string }[];
    return steps.map((s) => s.detail);
  }
}
