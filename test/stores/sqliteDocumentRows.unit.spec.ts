// Documents as the SQLite read store's rows: the JSON gives back what was stored (dates, bytes and
// the numbers JSON lacks included), and the key columns hold only what SQL compares as mingo does.
import { describe, expect, it } from 'vitest';
import { decode, encode } from '../../stores/readstore/sqlite/documentJson';
import { IRREGULAR, keyAt, keysAt, sqlKey } from '../../stores/readstore/sqlite/indexKeys';
import { Layout } from '../../stores/readstore/sqlite/rowLayout';

describe('documentJson', () => {
  it('gives back dates, bytes, -0, NaN and the infinities, at any depth', () => {
    const doc = { _id: 'a', at: new Date('2024-01-02T03:04:05.006Z'), nested: { bytes: Buffer.from([1, 2, 3]), list: [-0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY] } };
    const back = decode(encode(doc));
    expect(back.at).toEqual(doc.at);
    expect(back.at).toBeInstanceOf(Date);
    expect(Buffer.isBuffer((back.nested as { bytes: unknown }).bytes)).toBe(true);
    expect(back).toEqual(doc);
    expect(Object.is((back.nested as { list: number[] }).list[0], -0)).toBe(true);
  });

  it('writes plain documents as plain JSON, and leaves a stored `$date` string that is not a tag alone', () => {
    const doc = { _id: 1, words: ['$date', { text: '$binary' }], n: 2.5 };
    expect(encode(doc)).toBe(JSON.stringify(doc));
    expect(decode(encode(doc))).toEqual(doc);
  });
});

describe('indexKeys', () => {
  it('keys booleans as one-byte blobs and leaves out the numbers JSON cannot hold', () => {
    expect(sqlKey(true)).toEqual(Buffer.from([1]));
    expect(sqlKey(false)).toEqual(Buffer.from([0]));
    expect(sqlKey('x')).toBe('x');
    expect(sqlKey(3)).toBe(3);
    for (const value of [-0, Number.NaN, Number.POSITIVE_INFINITY, null, new Date(0), {}]) expect(sqlKey(value)).toBeUndefined();
  });

  it('keys the value at a path: null when absent, IRREGULAR past an array or on a value SQL cannot compare', () => {
    const doc = { _id: 'a', device: { kind: 'phone' }, tags: [{ kind: 'x' }], at: new Date(0) };
    expect(keyAt(doc, ['device', 'kind'])).toBe('phone');
    expect(keyAt(doc, ['device', 'missing'])).toBeNull();
    expect(keyAt(doc, ['absent', 'kind'])).toBeNull();
    expect(keyAt(doc, ['tags', 'kind'])).toBe(IRREGULAR);
    expect(keyAt(doc, ['at'])).toBe(IRREGULAR);
  });

  it('gives every scalar an equality on the path matches, inside arrays too', () => {
    expect(keysAt({ tags: ['a', 'b', 1, { x: 1 }] }, ['tags'])).toEqual(['a', 'b', 1]);
    expect(keysAt({ items: [{ k: 'a' }, { k: ['b', 'c'] }, 'no'] }, ['items', 'k'])).toEqual(['a', 'b', 'c']);
  });
});

describe('Layout', () => {
  const layout = new Layout([{ keys: { owner: 1, 'meta.size': -1 } }, { keys: { tags: 1 }, array: true }]);

  it('holds `_id` and the declared scalar fields as key columns, the array fields aside', () => {
    expect([...layout.scalarPaths]).toEqual(['_id', 'owner', 'meta.size']);
    expect([...layout.arrayPaths]).toEqual(['tags']);
    expect(layout.keyColumns).toEqual(['"k:_id"', '"k:owner"', '"k:meta.size"']);
  });

  it('gives a plain row its keys, and a row with an irregular field no keys', () => {
    expect(layout.rowValues({ _id: 'a', owner: 'u1', meta: { size: 3 }, tags: ['x'] })).toEqual([1, 'a', 'u1', 3]);
    expect(layout.rowValues({ _id: 'b', owner: ['u1', 'u2'], meta: { size: 3 } })).toEqual([0, null, null, null]);
  });

  it('signs the declarations whatever their order, so a change of them alone lays the rows out again', () => {
    const reordered = new Layout([{ keys: { tags: 1 }, array: true }, { keys: { 'meta.size': -1 } }, { keys: { owner: 1 } }]);
    expect(reordered.signature).toBe(layout.signature);
    expect(new Layout([{ keys: { owner: 1 } }]).signature).not.toBe(layout.signature);
  });
});
