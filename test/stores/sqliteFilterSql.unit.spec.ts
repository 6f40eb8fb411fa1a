// Filters as SQL for the SQLite read store: which part SQL decides exactly, which part only narrows
// the rows (array keys, the JSON prefilter), and which part mingo alone decides.
import { describe, expect, it } from 'vitest';
import { matcherOf } from '../../stores/readstore/documents/equalityMatcher';
import { indexedSource, limitClause, onlyId, orderBy, planFilter, whereClause } from '../../stores/readstore/sqlite/filterSql';
import { Layout } from '../../stores/readstore/sqlite/rowLayout';

const layout = new Layout([{ keys: { project: 1, state: 1 } }, { keys: { project: 1, created: -1 } }, { keys: { tags: 1 }, array: true }]);

describe('planFilter', () => {
  it('decides equalities, ranges and `$in` on declared fields exactly, with booleans as blobs', () => {
    const plan = planFilter(layout, 'jobs', { project: 'p1', created: { $gte: 5 }, state: { $in: ['a', null] } });
    expect(plan.residual).toBe(false);
    expect(plan.exact.map((c) => c.sql)).toEqual(['"k:project" = ?', `"k:created" >= ? AND "k:created" < ''`, '("k:state" IS NULL OR "k:state" IN (?))']);
    expect(plan.exact.flatMap((c) => c.params)).toEqual(['p1', 5, 'a']);
    expect(planFilter(layout, 'jobs', { state: true }).exact[0]!.params).toEqual([Buffer.from([1])]);
    expect(planFilter(layout, 'jobs', { state: { $ne: 'a' } }).exact[0]).toEqual({ sql: '"k:state" IS NOT ?', params: ['a'] });
    expect(planFilter(layout, 'jobs', { state: { $ne: null } }).exact[0]).toEqual({ sql: '"k:state" IS NOT NULL', params: [] });
  });

  it('keys `_id` by its JSON, so 1 and "1" stay apart', () => {
    expect(planFilter(layout, 'jobs', { _id: 1 }).exact[0]).toEqual({ sql: 'id = ?', params: ['1'] });
    expect(planFilter(layout, 'jobs', { _id: '1' }).exact[0]).toEqual({ sql: 'id = ?', params: ['"1"'] });
  });

  it('narrows on array keys and on the JSON, leaving the decision to mingo', () => {
    const plan = planFilter(layout, 'jobs', { tags: 'x', name: 'n' });
    expect(plan.residual).toBe(true);
    expect(plan.narrowing).toEqual([{ sql: 'seq IN (SELECT seq FROM "k:jobs" WHERE path = ? AND key IN (?))', params: ['tags', 'x'] }]);
    expect(plan.prefilter.length).toBeGreaterThan(0);
    expect(plan.exact).toEqual([]);
  });

  it('leaves to mingo what SQL does not compare as it does: another operator, a date, an `$or` with such a branch', () => {
    expect(planFilter(layout, 'jobs', { state: { $regex: '^a' } }).residual).toBe(true);
    expect(planFilter(layout, 'jobs', { created: new Date(0) }).residual).toBe(true);
    expect(planFilter(layout, 'jobs', { $or: [{ project: 'a' }, { other: 1 }] }).residual).toBe(true);
    const or = planFilter(layout, 'jobs', { $or: [{ project: 'a' }, { state: 'b' }] });
    expect(or.residual).toBe(false);
    expect(or.exact).toEqual([{ sql: '(("k:project" = ?)) OR (("k:state" = ?))', params: ['a', 'b'] }]);
  });
});

describe('the rest of a query', () => {
  it('joins clauses into a WHERE, none into nothing', () => {
    expect(whereClause([])).toBe('');
    expect(whereClause([{ sql: 'a = ?', params: [1] }, { sql: 'b OR c', params: [] }])).toBe('WHERE (a = ?) AND (b OR c)');
  });

  it('sorts in SQL on declared fields only, ties in natural order unless `_id` breaks them', () => {
    expect(orderBy(layout, { created: -1 })).toBe('"k:created" DESC, seq');
    expect(orderBy(layout, { _id: 1 })).toBe('"k:_id"');
    expect(orderBy(layout, undefined)).toBe('seq');
    expect(orderBy(layout, { name: 1 })).toBeUndefined();
  });

  it('names the index with the most pinned leading fields, and none when two tie', () => {
    const pins = (...paths: string[]) => paths.map((path) => ({ sql: '', params: [], pins: path }));
    expect(indexedSource(layout, 'c:jobs', pins('project', 'state'))).toBe('"c:jobs" INDEXED BY "c:jobs:project,state"');
    expect(indexedSource(layout, 'c:jobs', pins('project'))).toBe('"c:jobs"');
    expect(indexedSource(layout, 'c:jobs', pins('project', 'state', 'created'))).toBe('"c:jobs"');
  });

  it('writes the limit into the SQL, 0 and none as no limit', () => {
    expect(limitClause(20)).toBe('LIMIT 20 OFFSET ?');
    expect(limitClause(0)).toBe('LIMIT -1 OFFSET ?');
    expect(limitClause(undefined)).toBe('LIMIT -1 OFFSET ?');
  });

  it('recognises a filter of `_id` alone', () => {
    expect(onlyId({ _id: 'a' })).toBe('a');
    expect(onlyId({ _id: 'a', state: 'x' })).toBeUndefined();
    expect(onlyId({ _id: Number.NaN })).toBeUndefined();
  });

  it('tests a document by the plain equalities, or else by mingo', () => {
    expect(matcherOf({ state: 'a' })({ _id: 1, state: ['b', 'a'] })).toBe(true);
    expect(matcherOf({ n: { $gt: 2 } })({ _id: 1, n: 3 })).toBe(true);
    expect(matcherOf({ n: { $gt: 2 } })({ _id: 1, n: 2 })).toBe(false);
  });
});
