import { describe, expect, it } from 'vitest';
import { ReadModelMemo } from '../../api/http/readModelMemo';
import { deepFreeze } from '../../stores/readstore/deepFreeze';

describe('ReadModelMemo', () => {
  const at = (mark: { value: number }) => () => mark.value;

  it('keeps a value while the mark stands and its time lasts', () => {
    const mark = { value: 7 };
    const memo = new ReadModelMemo<string>(at(mark), { entries: 10, bytes: 1000 });
    memo.set('a', memo.mark(), 'one', 6, 2000);
    expect(memo.get('a', 1000)).toBe('one');
    expect(memo.get('a', 1999)).toBe('one');
    expect(memo.get('a', 2000)).toBeUndefined();
    // Gone once missed: it does not come back when the clock is set back.
    expect(memo.get('a', 1000)).toBeUndefined();
  });

  it('past its time, with a grace, sends one caller to make it anew and serves the others until the grace ends', () => {
    const mark = { value: 3 };
    const memo = new ReadModelMemo<string>(at(mark), { entries: 10, bytes: 1000, graceMs: 500 });
    memo.set('a', memo.mark(), 'old', 6, 1000);
    expect(memo.get('a', 1000)).toBeUndefined(); // the one sent to renew
    expect(memo.get('a', 1001)).toBe('old');
    expect(memo.get('a', 1499)).toBe('old');
    expect(memo.get('a', 1500)).toBeUndefined(); // the grace is over: gone
    expect(memo.get('a', 1000)).toBeUndefined();
    // Renewed in time: fresh again, for everyone.
    memo.set('b', memo.mark(), 'old', 6, 1000);
    expect(memo.get('b', 1200)).toBeUndefined();
    memo.set('b', memo.mark(), 'new', 6, 2200);
    expect(memo.get('b', 1300)).toBe('new');
    // A write ends the grace at once.
    memo.set('c', memo.mark(), 'old', 6, 1000);
    expect(memo.get('c', 1100)).toBeUndefined();
    mark.value = 4;
    expect(memo.get('c', 1101)).toBeUndefined();
  });

  it('misses once the mark moved, and keeps nothing kept under an older mark', () => {
    const mark = { value: 1 };
    const memo = new ReadModelMemo<string>(at(mark), { entries: 10, bytes: 1000 });
    const taken = memo.mark();
    memo.set('a', taken, 'before', 12, Number.POSITIVE_INFINITY);
    mark.value = 2;
    expect(memo.get('a')).toBeUndefined();
    // A value made of reads that began before a write is kept under the mark taken then: a miss at once.
    memo.set('b', taken, 'raced', 10, Number.POSITIVE_INFINITY);
    expect(memo.get('b')).toBeUndefined();
    expect(memo.size.entries).toBe(0);
  });

  it('keeps nothing over a store without a mark', () => {
    const memo = new ReadModelMemo<string>(undefined, { entries: 10, bytes: 1000 });
    expect(memo.mark()).toBeUndefined();
    memo.set('a', memo.mark(), 'one', 6, Number.POSITIVE_INFINITY);
    expect(memo.get('a')).toBeUndefined();
    expect(memo.size).toEqual({ entries: 0, bytes: 0 });
  });

  it('holds at most its entries, dropping the least recently used first', () => {
    const memo = new ReadModelMemo<number>(() => 0, { entries: 3, bytes: 1_000_000 });
    for (const key of ['a', 'b', 'c']) memo.set(key, 0, key.charCodeAt(0), 8, Number.POSITIVE_INFINITY);
    expect(memo.get('a')).toBe(97); // a is now the most recently used
    memo.set('d', 0, 100, 8, Number.POSITIVE_INFINITY);
    expect(memo.get('b')).toBeUndefined();
    expect([memo.get('a'), memo.get('c'), memo.get('d')]).toEqual([97, 99, 100]);
    expect(memo.size.entries).toBe(3);
  });

  it('holds at most its bytes, keys counted, and refuses a value heavier than all of them', () => {
    const memo = new ReadModelMemo<string>(() => 0, { entries: 100, bytes: 100 });
    memo.set('k1', 0, 'x', 40, Number.POSITIVE_INFINITY); // 40 + 4 for the key
    memo.set('k2', 0, 'y', 40, Number.POSITIVE_INFINITY);
    expect(memo.size.bytes).toBe(88);
    memo.set('k3', 0, 'z', 40, Number.POSITIVE_INFINITY);
    expect(memo.get('k1')).toBeUndefined();
    expect(memo.size.bytes).toBe(88);
    memo.set('huge', 0, 'w', 101, Number.POSITIVE_INFINITY);
    expect(memo.get('huge')).toBeUndefined();
    expect([memo.get('k2'), memo.get('k3')]).toEqual(['y', 'z']);
  });

  it('counts a value kept again under its key once', () => {
    const memo = new ReadModelMemo<string>(() => 0, { entries: 10, bytes: 1000 });
    memo.set('a', 0, 'one', 10, Number.POSITIVE_INFINITY);
    memo.set('a', 0, 'two', 20, Number.POSITIVE_INFINITY);
    expect(memo.get('a')).toBe('two');
    expect(memo.size).toEqual({ entries: 1, bytes: 22 });
  });
});

describe('deepFreeze', () => {
  it('freezes nested objects and arrays, so a request cannot change what others are handed', () => {
    const doc = deepFreeze({ id: 1, organizations: [{ id: 2, roles: ['admin'] }], created: new Date(0) });
    expect(() => {
      (doc.organizations[0]!.roles as string[]).push('member');
    }).toThrow(TypeError);
    expect(() => {
      (doc as { id: number }).id = 2;
    }).toThrow(TypeError);
    expect(Object.isFrozen(doc.organizations[0])).toBe(true);
  });

  it('leaves typed arrays, which cannot be frozen, as they are', () => {
    const doc = deepFreeze({ bytes: Buffer.from([1, 2]) });
    expect(Object.isFrozen(doc)).toBe(true);
    expect(doc.bytes[0]).toBe(1);
  });
});
