// The SQLite store's answer cache stays bounded, hands out copies and forgets a table's answers.
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

  it('hands out copies, and keeps its own copy of what it is given', () => {
    const cache = new QueryCache();
    const key = cache.key('c:t', 'find', { a: 1 })!;
    const given = [{ _id: 1, tags: ['x'] }];
    cache.remember('c:t', key, { docs: given });
    given[0]!.tags.push('changed');
    const first = cache.find(key)!;
    (first[0]!.tags as string[]).push('mutated');
    expect(cache.find(key)).toEqual([{ _id: 1, tags: ['x'] }]);
  });

  it('keeps documents as its codec encodes them, and decodes a new copy for each hit', () => {
    const kept: unknown[] = [];
    const cache = new QueryCache({
      encode: (doc) => {
        const text = JSON.stringify(doc);
        kept.push(text);
        return text;
      },
      decode: (text) => JSON.parse(text as string),
    });
    const key = cache.key('c:t', 'find', { a: 1 })!;
    cache.remember('c:t', key, { docs: [{ _id: 1, a: 1, tags: ['x'] }] });
    expect(kept).toEqual(['{"_id":1,"a":1,"tags":["x"]}']);
    const first = cache.find(key)!;
    (first[0]!.tags as string[]).push('mutated');
    expect(cache.find(key)).toEqual([{ _id: 1, a: 1, tags: ['x'] }]);
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
