// Filters as SQL on the rows' key columns. The part of a filter on declared index fields is
// translated exactly (for plain rows, see rowLayout.ts); conditions on declared array fields narrow
// the rows through the side table of keys; conditions on other fields narrow them on the stored
// JSON (jsonPrefilter.ts). mingo decides whatever SQL does not decide exactly.
import { isPlainObject } from '../documents/plainObjects';
import { jsonPrefilter } from '../jsonPrefilter';
import type { DocumentId, Filter, FindOptions } from '../readStore';
import { idKey, sqlKey } from './indexKeys';
import type { Layout } from './rowLayout';
import { indexName, keyColumn, keyTable, quote } from './tableNames';

export interface Clause {
  sql: string;
  params: unknown[];
  /** The field a pure equality (or `$in`, or null) pins: what an index's leading fields can use. */
  pins?: string;
}

export interface FilterPlan {
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

/** The clauses of a filter on the collection's rows, and what is left to mingo. */
export function planFilter(layout: Layout, name: string, filter: Filter): FilterPlan {
  const plan: FilterPlan = { exact: [], narrowing: [], residual: false, prefilter: [] };
  for (const [path, condition] of Object.entries(filter)) {
    if (path === '$or') {
      const clause = translateOr(layout, name, condition);
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
function translateOr(layout: Layout, name: string, branches: unknown): Clause | undefined {
  if (!Array.isArray(branches) || branches.length === 0) return undefined;
  const parts: Clause[] = [];
  for (const branch of branches) {
    if (!isPlainObject(branch) || Object.keys(branch).length === 0) return undefined;
    const plan = planFilter(layout, name, branch);
    if (plan.residual || plan.narrowing.length > 0) return undefined;
    parts.push({ sql: plan.exact.map((c) => `(${c.sql})`).join(' AND '), params: plan.exact.flatMap((c) => c.params) });
  }
  return { sql: parts.map((p) => `(${p.sql})`).join(' OR '), params: parts.flatMap((p) => p.params) };
}

/** The WHERE of clauses that must all hold; empty for none. */
export function whereClause(clauses: readonly Clause[]): string {
  return clauses.length > 0 ? `WHERE ${clauses.map((c) => `(${c.sql})`).join(' AND ')}` : '';
}

/** ORDER BY for a sort SQL can do exactly (every key a declared scalar field), else undefined. */
export function orderBy(layout: Layout, sort: FindOptions['sort']): string | undefined {
  const keys = Object.entries(sort ?? {});
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
export function indexedSource(layout: Layout, table: string, clauses: readonly Clause[]): string {
  const pinned = new Set(clauses.flatMap((c) => (c.pins ? [c.pins] : [])));
  if (pinned.size < 2) return quote(table);
  const ranked = layout.scalarIndexes.map((declaration) => {
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

/**
 * The limit is written into the SQL: bound as a parameter, SQLite took ten times as long over a
 * one-row index search (the few limits the queries use keep the statements few). MongoDB reads a
 * limit of 0 as "no limit"; SQLite's is -1.
 */
export function limitClause(limit: number | undefined): string {
  const n = limit && Number.isSafeInteger(limit) && limit > 0 ? limit : -1;
  return `LIMIT ${n} OFFSET ?`;
}

/** The `_id` of a filter that is `{ _id: <string or finite number> }` and nothing else. */
export function onlyId(filter: Filter): DocumentId | undefined {
  let id: unknown;
  for (const key in filter) {
    if (key !== '_id') return undefined;
    id = filter[key];
  }
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : undefined;
}
