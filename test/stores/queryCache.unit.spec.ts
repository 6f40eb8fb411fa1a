// The SQLite store's answer cache stays bounded, hands out frozen documents and forgets a table's answers.
import { describe, expect, it } from 'vitest';
import { QueryCache } from '../../stores/readstore/queryCache';

describe('QueryCache', () => {
  it('keeps at most 5,000 documents, dropping the least recently used answers first', () => {
    const cache = new QueryCache();
    const keys = Array.from({ length: 5001 }, (_, i) => cache.key('c:t', 'find', { _id: i })!);
    cache.remember('c:t', keys[0]!, { docs: [{ _id: 0 }] });
    cache.remember('c:t', keys[1]!, { docs: [{ _id: 1 }] });
    // Used again: no longer the oldest.
    expect(cache.find(keys[0]!)).toEqual([{ _id: 0 }]);
    for (let i = 2; i < 5001; i++) cache.remember('c:t', keys[i]!, { docs: [{ _id: i }] });
    expect(cache.find(keys[1]!)).toBeUndefined();
    expect(cache.find(keys[0]!)).toEqual([{ _id: 0 }]);
    expect(cache.find(keys[5000]!)).toEqual([{ _id: 5000 }]);
  });

  it('counts empty answers and counts against its bound: ever new questions between writes do not grow it', () => {
    const cache = new QueryCache();
    const keys = Array.from({ length: 5001 }, (_, i) => cache.key('c:t', 'count', { n: i })!);
    keys.forEach((key, i) => cache.remember('c:t', key, { count: i }));
    expect(cache.count(keys[0]!)).toBeUndefined();
    expect(cache.count(keys[5000]!)).toBe(5000);
    const empty = cache.key('c:t', 'find', { none: true })!;
    cache.remember('c:t', empty, { docs: [] });
    expect(cache.find(empty)).toEqual([]);
    expect(cache.count(keys[1]!)).toBeUndefined();
  });

  it('keeps no answer of more than 100 documents', () => {
    const cache = new QueryCache();
    const key = cache.key('c:t', 'find', {})!;
    cache.remember('c:t', key, { docs: Array.from({ length: 101 }, (_, i) => ({ _id: i })) });
    expect(cache.find(key)).toBeUndefined();
  });

  it('hands out the documents it keeps, deep-frozen, in a new array each time: a reader cannot change them for the next', () => {
    const cache = new QueryCache();
    const key = cache.key('c:t', 'find', { a: 1 })!;
    const given = [{ _id: 1, tags: ['x'], at: { day: 1 } }];
    cache.remember('c:t', key, { docs: given });
    // Frozen in place: the reader that made the answer holds the same documents as the next.
    expect(() => given[0]!.tags.push('changed')).toThrow(TypeError);
    const first = cache.find(key)!;
    expect(first[0]).toBe(given[0]);
    expect(() => ((first[0]!.at as { day: number }).day = 2)).toThrow(TypeError);
    expect(() => delete (first[0] as { tags?: unknown }).tags).toThrow(TypeError);
    // The array is the reader's own: sorting or emptying it leaves the kept answer whole.
    first.length = 0;
    expect(cache.find(key)).toEqual([{ _id: 1, tags: ['x'], at: { day: 1 } }]);
  });

  it('forgets the answers of one table, or of all', () => {
    const cache = new QueryCache();
    const a = cache.key('c:a', 'count', {})!;
    const b = cache.key('c:b', 'count', {})!;
    cache.remember('c:a', a, { count: 1 });
    cache.remember('c:b', b, { count: 2 });
    cache.clearTable('c:a');
    expect(cache.count(a)).toBeUndefined();
    expect(cache.count(b)).toBe(2);
    cache.clear();
    expect(cache.count(b)).toBeUndefined();
  });

  it('gives no key to a query its JSON cannot tell apart (dates, NaN, undefined)', () => {
    const cache = new QueryCache();
    expect(cache.key('c:t', 'find', { created: new Date(0) })).toBeUndefined();
    expect(cache.key('c:t', 'find', { n: Number.NaN })).toBeUndefined();
    expect(cache.key('c:t', 'find', { n: undefined })).toBeUndefined();
    expect(cache.key('c:t', 'find', { n: 1 })).not.toBe(cache.key('c:t', 'find', { n: '1' }));
  });
});
