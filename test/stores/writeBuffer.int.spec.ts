import { beforeEach, describe, expect, it } from 'vitest';
import { DuplicateIdError } from '../../stores/readstore/documents/collectionNames';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import type { WriteOp } from '../../stores/readstore/readStore';
import { WriteBuffer } from '../../stores/readstore/writeBuffer';

describe('a write buffer over a read store', () => {
  let store: MemoryReadStore;
  let flushed: WriteOp[][];
  let buffer: WriteBuffer;

  beforeEach(async () => {
    store = new MemoryReadStore();
    await store.collection('things').updateOne({ _id: 'a' }, { $set: { n: 1, tag: 'x' } }, { upsert: true });
    await store.collection('things').updateOne({ _id: 'b' }, { $set: { n: 2, tag: 'x' } }, { upsert: true });
    flushed = [];
    buffer = new WriteBuffer(store, 'p', new Set(['things', 'others']), async (ops) => {
      flushed.push([...ops]);
      await store.commit(ops, []);
    });
  });

  it('answers reads by _id with the batch\'s own writes, and leaves the store alone until its ops are committed', async () => {
    const things = buffer.collection('things');
    expect(await things.updateOne({ _id: 'a' }, { $inc: { n: 10 } })).toEqual({ matched: 1, modified: 1, upserted: false });
    expect(await things.updateOne({ _id: 'c' }, { $setOnInsert: { n: 3 } }, { upsert: true })).toEqual({ matched: 0, modified: 0, upserted: true });
    expect(await things.deleteOne({ _id: 'b' })).toBe(1);
    expect(await things.findOne({ _id: 'a' })).toEqual({ _id: 'a', n: 11, tag: 'x' });
    expect(await things.findOne({ _id: 'b' })).toBeNull();
    expect(await things.find({ _id: 'c' })).toEqual([{ _id: 'c', n: 3 }]);
    expect(await things.count({ _id: 'a', n: { $gt: 10 } })).toBe(1);
    // A guard the batch's own write has moved past now misses.
    expect(await things.updateOne({ _id: 'a', n: { $lt: 5 } }, { $set: { n: 0 } })).toEqual({ matched: 0, modified: 0, upserted: false });

    expect(await store.collection('things').find({}, { sort: { _id: 1 } })).toEqual([{ _id: 'a', n: 1, tag: 'x' }, { _id: 'b', n: 2, tag: 'x' }]);
    const ops = buffer.takeOps();
    expect(ops).toEqual([
      { kind: 'put', collection: 'things', doc: { _id: 'a', n: 11, tag: 'x' } },
      { kind: 'put', collection: 'things', doc: { _id: 'c', n: 3 } },
      { kind: 'delete', collection: 'things', id: 'b' },
    ]);
    await store.commit(ops, [{ name: 'p', position: 7n }]);
    expect(await store.collection('things').find({}, { sort: { _id: 1 } })).toEqual([{ _id: 'a', n: 11, tag: 'x' }, { _id: 'c', n: 3 }]);
    expect(buffer.takeOps()).toEqual([]);
    expect(flushed).toEqual([]);
  });

  it('decides the projections\' guards as the store does, whatever the guarded field holds', async () => {
    const held = [undefined, null, 'a', 'm', 'z', 0, 5, 9, true, ['a', 'z'], [1, 9], { x: 1 }, new Date(0)];
    const guards = [{ $lt: 'm' }, { $lt: 5 }, { $not: { $gte: 'm' } }, { $not: { $gte: 5 } }, 'm', 5, true, { $gt: 'a' }, null];
    const docs = held.map((value, i) => ({ _id: `g${i}`, ...(value === undefined ? {} : { f: value }), other: 1 }));
    await store.commit(docs.map((doc) => ({ kind: 'put', collection: 'guarded', doc })), []);
    const guarded = new WriteBuffer(store, 'p', new Set(['guarded']), async () => undefined).collection('guarded');
    for (const doc of docs) {
      for (const guard of guards) {
        for (const filter of [{ _id: doc._id, f: guard }, { _id: doc._id, other: 1, f: guard }, { _id: doc._id, f: guard, 'g.h': { $exists: false } }]) {
          const expected = (await store.collection('guarded').count(filter)) === 1;
          expect({ filter, matched: (await guarded.updateOne(filter, { $set: { seen: true } })).matched === 1 }).toEqual({ filter, matched: expected });
        }
      }
    }
  });

  it('flushes the collection\'s pending writes before a query it cannot answer exactly, which then sees them', async () => {
    const things = buffer.collection('things');
    await things.updateOne({ _id: 'a' }, { $set: { tag: 'y' } });
    await buffer.collection('others').updateOne({ _id: 1 }, { $set: { v: true } }, { upsert: true });
    expect((await things.find({ tag: 'x' })).map((d) => d._id)).toEqual(['b']);
    expect(await things.count({ tag: 'y' })).toBe(1);
    // Only that collection was flushed; the other's write is still the batch's.
    expect(flushed).toEqual([[{ kind: 'put', collection: 'things', doc: { _id: 'a', n: 1, tag: 'y' } }]]);
    expect(await store.collection('others').count()).toBe(0);
    expect(buffer.takeOps()).toEqual([{ kind: 'put', collection: 'others', doc: { _id: 1, v: true } }]);
  });

  it('runs a write over many documents on the store directly, after the pending ones, and reads by _id see its effect', async () => {
    const things = buffer.collection('things');
    await things.updateOne({ _id: 'a' }, { $inc: { n: 1 } });
    expect(await things.findOne({ _id: 'b' })).toMatchObject({ n: 2 });
    expect(await things.updateMany({ tag: 'x' }, { $inc: { n: 100 } })).toMatchObject({ matched: 2, modified: 2 });
    expect(await things.findOne({ _id: 'a' })).toMatchObject({ n: 102 });
    expect(await things.findOne({ _id: 'b' })).toMatchObject({ n: 102 });
    expect(await things.deleteMany({ n: { $gt: 100 } })).toBe(2);
    expect(await things.findOne({ _id: 'a' })).toBeNull();
    expect(buffer.takeOps()).toEqual([]);
  });

  it('forgets what was written after a savepoint when rolled back to it', async () => {
    const things = buffer.collection('things');
    await things.updateOne({ _id: 'a' }, { $set: { n: 5 } });
    const savepoint = buffer.savepoint();
    await things.updateOne({ _id: 'a' }, { $set: { n: 6 } });
    await things.deleteOne({ _id: 'b' });
    await things.updateOne({ _id: 'z' }, { $set: { n: 0 } }, { upsert: true });
    buffer.rollback(savepoint);
    expect(await things.findOne({ _id: 'a' })).toMatchObject({ n: 5 });
    expect(await things.findOne({ _id: 'b' })).toMatchObject({ n: 2 });
    expect(buffer.takeOps()).toEqual([{ kind: 'put', collection: 'things', doc: { _id: 'a', n: 5, tag: 'x' } }]);
  });

  it('refuses a guarded upsert over a taken _id as the store does, and gives out copies', async () => {
    const things = buffer.collection('things');
    await expect(things.updateOne({ _id: 'a', n: { $gt: 5 } }, { $set: { n: 9 } }, { upsert: true })).rejects.toBeInstanceOf(DuplicateIdError);
    await expect(store.collection('things').updateOne({ _id: 'a', n: { $gt: 5 } }, { $set: { n: 9 } }, { upsert: true })).rejects.toBeInstanceOf(DuplicateIdError);
    const doc = await things.findOne({ _id: 'a' });
    doc!.n = 1000;
    expect(await things.findOne({ _id: 'a' })).toMatchObject({ n: 1 });
    expect(() => buffer.collection('checkpoints')).toThrow(/reserved/);
  });

  it('refuses a collection its projection does not declare, for reads and writes alike, and leaves it as it was', async () => {
    await store.collection('theirs').updateOne({ _id: 1 }, { $set: { v: 1 } }, { upsert: true });
    const theirs = buffer.collection('theirs');
    await expect(theirs.updateOne({ _id: 1 }, { $set: { v: 2 } })).rejects.toThrow(/Projection p uses the collection theirs, which it does not declare/);
    await expect(theirs.deleteMany({})).rejects.toThrow(/does not declare/);
    await expect(theirs.findOne({ _id: 1 })).rejects.toThrow(/does not declare/);
    expect(await store.collection('theirs').find({})).toEqual([{ _id: 1, v: 1 }]);
    expect(buffer.takeOps()).toEqual([]);
  });
});

