// The read store contract: every adapter answers these alike (MemoryReadStore with mingo, MongoReadStore
// on MongoDB or FerretDB). Each test starts from an emptied store.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DuplicateIdError } from '../../stores/readstore/documents/collectionNames';
import type { Collection, Document, ReadStore } from '../../stores/readstore/readStore';

type Sample = Document & {
  label: string;
  length: number;
  device: { name: string; kind: string };
  tags: string[];
  windows: { start: number; ok: boolean }[];
};

const samples: Sample[] = [
  { _id: 's1', label: 'cat', length: 10, device: { name: 'pi', kind: 'linux' }, tags: ['a', 'b'], windows: [{ start: 0, ok: true }] },
  { _id: 's2', label: 'dog', length: 30, device: { name: 'esp', kind: 'mcu' }, tags: ['b'], windows: [{ start: 5, ok: false }] },
  { _id: 's3', label: 'cat', length: 20, device: { name: 'nano', kind: 'mcu' }, tags: [], windows: [] },
  { _id: 's4', label: 'bird', length: 40, device: { name: 'pi', kind: 'linux' }, tags: ['c'], windows: [{ start: 0, ok: false }, { start: 2, ok: true }] },
];

/** The port has no insert: documents come in as projections create them, by upsert with $setOnInsert. */
async function seed<T extends Document>(collection: Collection<T>, docs: T[]): Promise<void> {
  for (const { _id, ...fields } of docs) {
    await collection.updateOne({ _id }, { $setOnInsert: fields }, { upsert: true });
  }
}

const ids = (docs: Document[]): unknown[] => docs.map((doc) => doc._id);

/** Zero-padded so that string order is numeric order, as projections store positions. */
const position = (n: number): string => n.toString().padStart(20, '0');

export function readStoreContract(name: string, open: () => Promise<ReadStore>, skipReason?: string): void {
  const suite = skipReason === undefined ? describe : describe.skip;
  suite(skipReason === undefined ? name : `${name} (skipped: ${skipReason})`, () => {
    let store: ReadStore;
    let col: Collection<Sample>;

    beforeEach(async () => {
      store = await open();
      await store.dropAll();
      col = store.collection<Sample>('samples');
    });

    afterEach(async () => {
      await store.close();
    });

    describe('find', () => {
      beforeEach(async () => {
        await seed(col, samples);
      });

      it('returns every document for an empty filter', async () => {
        const found = await col.find();
        expect([...found].sort((a, b) => String(a._id).localeCompare(String(b._id)))).toEqual(samples);
      });

      it('matches a field against a list with $in', async () => {
        expect(ids(await col.find({ label: { $in: ['dog', 'bird'] } }, { sort: { _id: 1 } }))).toEqual(['s2', 's4']);
      });

      it('compares values with $gt', async () => {
        expect(ids(await col.find({ length: { $gt: 20 } }, { sort: { _id: 1 } }))).toEqual(['s2', 's4']);
      });

      it('accepts any of several conditions with $or', async () => {
        const found = await col.find({ $or: [{ label: 'dog' }, { length: { $lt: 15 } }] }, { sort: { _id: 1 } });
        expect(ids(found)).toEqual(['s1', 's2']);
      });

      it('reaches into nested fields with dot notation', async () => {
        expect(ids(await col.find({ 'device.kind': 'mcu' }, { sort: { _id: 1 } }))).toEqual(['s2', 's3']);
      });

      it('matches an array that contains the value', async () => {
        expect(ids(await col.find({ tags: 'b' }, { sort: { _id: 1 } }))).toEqual(['s1', 's2']);
      });

      it('matches fields of array elements with dot notation', async () => {
        expect(ids(await col.find({ 'windows.start': 2 }))).toEqual(['s4']);
      });

      it('matches one array element against several conditions with $elemMatch', async () => {
        // s4 has a window with start 0 and one that is ok, but only s1 has both in the same element.
        const found = await col.find({ windows: { $elemMatch: { start: 0, ok: true } } });
        expect(ids(found)).toEqual(['s1']);
      });

      it('sorts ascending and descending', async () => {
        expect(ids(await col.find({}, { sort: { length: 1 } }))).toEqual(['s1', 's3', 's2', 's4']);
        expect(ids(await col.find({}, { sort: { length: -1 } }))).toEqual(['s4', 's2', 's3', 's1']);
      });

      it('sorts by several keys, the first one first', async () => {
        const found = await col.find({}, { sort: { label: 1, length: -1 } });
        expect(ids(found)).toEqual(['s4', 's3', 's1', 's2']);
      });

      it('skips and limits after sorting', async () => {
        expect(ids(await col.find({}, { sort: { length: 1 }, skip: 1, limit: 2 }))).toEqual(['s3', 's2']);
        expect(ids(await col.find({}, { sort: { length: 1 }, skip: 3 }))).toEqual(['s4']);
        expect(ids(await col.find({}, { sort: { length: 1 }, limit: 1 }))).toEqual(['s1']);
      });

      it('skips and limits a filter that is evaluated on array elements', async () => {
        const found = await col.find({ windows: { $elemMatch: { ok: false } } }, { sort: { length: 1 }, skip: 1, limit: 1 });
        expect(ids(found)).toEqual(['s4']);
      });

      it('returns an empty list when nothing matches', async () => {
        expect(await col.find({ label: 'fish' })).toEqual([]);
      });
    });

    describe('count', () => {
      it('counts every document or only the matching ones', async () => {
        expect(await col.count()).toBe(0);
        await seed(col, samples);
        expect(await col.count()).toBe(4);
        expect(await col.count({ label: 'cat' })).toBe(2);
        expect(await col.count({ windows: { $elemMatch: { start: { $gt: 1 }, ok: true } } })).toBe(1);
      });
    });

    describe('findOne', () => {
      it('returns the matching document', async () => {
        await seed(col, samples);
        expect(await col.findOne({ _id: 's2' })).toEqual(samples[1]);
      });

      it('returns null when nothing matches', async () => {
        await seed(col, samples);
        expect(await col.findOne({ _id: 'missing' })).toBeNull();
        expect(await col.findOne({ label: 'fish' })).toBeNull();
      });
    });

    describe('updateOne', () => {
      it('inserts on upsert when nothing matches, then updates that document', async () => {
        const projects = store.collection('projects');
        expect(await projects.updateOne({ _id: 'p1' }, { $set: { name: 'one' } }, { upsert: true })).toEqual({
          matched: 0,
          modified: 0,
          upserted: true,
        });
        expect(await projects.updateOne({ _id: 'p1' }, { $set: { name: 'uno' } }, { upsert: true })).toEqual({
          matched: 1,
          modified: 1,
          upserted: false,
        });
        expect(await projects.find()).toEqual([{ _id: 'p1', name: 'uno' }]);
      });

      it('builds an upserted document from the equality fields of the filter, $setOnInsert and the other operators', async () => {
        const projects = store.collection('projects');
        await projects.updateOne(
          { _id: 'p1', owner: 'u1', 'meta.kind': 'audio', tier: { $eq: 'free' }, size: { $gt: 3 } },
          { $setOnInsert: { created: 1, deleted: null, members: [] }, $set: { name: 'one' }, $inc: { count: 2 }, $push: { tags: 'new' } },
          { upsert: true },
        );
        expect(await projects.findOne({ _id: 'p1' })).toEqual({
          _id: 'p1',
          owner: 'u1',
          meta: { kind: 'audio' },
          tier: 'free',
          created: 1,
          deleted: null,
          members: [],
          name: 'one',
          count: 2,
          tags: ['new'],
        });
      });

      it('gives an upserted document without an _id in filter or update a string _id', async () => {
        const projects = store.collection('projects');
        expect((await projects.updateOne({ name: 'anonymous' }, { $set: { n: 1 } }, { upsert: true })).upserted).toBe(true);
        const [doc] = await projects.find();
        expect(doc).toEqual({ _id: expect.any(String), name: 'anonymous', n: 1 });
      });

      it('applies $setOnInsert only when it inserts', async () => {
        const projects = store.collection('projects');
        await projects.updateOne({ _id: 'p1' }, { $setOnInsert: { created: 1 }, $set: { seen: 1 } }, { upsert: true });
        await projects.updateOne({ _id: 'p1' }, { $setOnInsert: { created: 2 }, $set: { seen: 2 } }, { upsert: true });
        expect(await projects.findOne({ _id: 'p1' })).toEqual({ _id: 'p1', created: 1, seen: 2 });
      });

      it('sets top-level and nested fields with $set', async () => {
        await seed(col, samples);
        await col.updateOne({ _id: 's1' }, { $set: { label: 'lion', 'device.name': 'pi5', 'extra.deep': true } });
        expect(await col.findOne({ _id: 's1' })).toEqual({
          ...samples[0],
          label: 'lion',
          device: { name: 'pi5', kind: 'linux' },
          extra: { deep: true },
        });
      });

      it('increments with $inc, starting from zero when the field is missing', async () => {
        await seed(col, samples);
        await col.updateOne({ _id: 's1' }, { $inc: { length: 5, 'stats.views': 1 } });
        await col.updateOne({ _id: 's1' }, { $inc: { length: -2, 'stats.views': 1 } });
        expect(await col.findOne({ _id: 's1' })).toMatchObject({ length: 13, stats: { views: 2 } });
      });

      it('appends with $push, several values at once with $each', async () => {
        await seed(col, samples);
        await col.updateOne({ _id: 's1' }, { $push: { tags: 'c', windows: { start: 9, ok: true } } });
        await col.updateOne({ _id: 's1' }, { $push: { tags: { $each: ['d', 'e'] }, fresh: 'x' } });
        expect(await col.findOne({ _id: 's1' })).toMatchObject({
          tags: ['a', 'b', 'c', 'd', 'e'],
          windows: [{ start: 0, ok: true }, { start: 9, ok: true }],
          fresh: ['x'],
        });
      });

      it('removes every array element equal to a value with $pull', async () => {
        const lists = store.collection('lists');
        await seed(lists, [{ _id: 'l1', values: [1, 2, 1, 3], words: ['a', 'b'] }]);
        expect(await lists.updateOne({ _id: 'l1' }, { $pull: { values: 1, words: 'z' } })).toEqual({ matched: 1, modified: 1, upserted: false });
        expect(await lists.findOne({ _id: 'l1' })).toEqual({ _id: 'l1', values: [2, 3], words: ['a', 'b'] });
      });

      it('removes every array element matching a condition with $pull', async () => {
        await seed(col, samples);
        await col.updateOne({ _id: 's4' }, { $pull: { windows: { ok: false }, tags: { $in: ['c', 'x'] } } });
        expect(await col.findOne({ _id: 's4' })).toMatchObject({ windows: [{ start: 2, ok: true }], tags: [] });
        const lists = store.collection('lists');
        await seed(lists, [{ _id: 'l1', values: [1, 5, 2, 7] }]);
        await lists.updateOne({ _id: 'l1' }, { $pull: { values: { $gt: 4 } }, $set: { touched: true } });
        expect(await lists.findOne({ _id: 'l1' })).toEqual({ _id: 'l1', values: [1, 2], touched: true });
      });

      it('removes fields with $unset', async () => {
        await seed(col, samples);
        await col.updateOne({ _id: 's1' }, { $unset: { tags: '', 'device.kind': '' } });
        const doc = await col.findOne({ _id: 's1' });
        expect(doc).not.toHaveProperty('tags');
        expect(doc?.device).toEqual({ name: 'pi' });
      });

      it('changes only one of several matching documents', async () => {
        await seed(col, samples);
        expect(await col.updateOne({ label: 'cat' }, { $set: { chosen: true } })).toEqual({ matched: 1, modified: 1, upserted: false });
        expect(await col.count({ chosen: true })).toBe(1);
      });

      it('reports nothing matched when the filter misses and upsert is off', async () => {
        await seed(col, samples);
        expect(await col.updateOne({ _id: 'missing' }, { $set: { label: 'x' } })).toEqual({ matched: 0, modified: 0, upserted: false });
        expect(await col.count()).toBe(4);
      });

      it('reports a match without a modification when the update changes nothing', async () => {
        await seed(col, samples);
        expect(await col.updateOne({ _id: 's1' }, { $set: { label: 'cat' } })).toEqual({ matched: 1, modified: 0, upserted: false });
        expect(await col.updateOne({ _id: 's1' }, { $pull: { tags: { $in: ['zz'] } } })).toEqual({ matched: 1, modified: 0, upserted: false });
      });

      it('changes nothing when guarded by a position the document has already passed', async () => {
        const projects = store.collection('projects');
        await projects.updateOne({ _id: 'p1' }, { $setOnInsert: { name: 'one', _position: position(10) } }, { upsert: true });
        // Replaying the event at position 10 (or an older one, 9) must not apply it again.
        for (const replayed of [10, 9]) {
          const result = await projects.updateOne(
            { _id: 'p1', _position: { $lt: position(replayed) } },
            { $set: { name: 'again', _position: position(replayed) }, $inc: { edits: 1 } },
          );
          expect(result).toEqual({ matched: 0, modified: 0, upserted: false });
        }
        expect(await projects.findOne({ _id: 'p1' })).toEqual({ _id: 'p1', name: 'one', _position: position(10) });
        await projects.updateOne({ _id: 'p1', _position: { $lt: position(11) } }, { $set: { name: 'two', _position: position(11) } });
        expect(await projects.findOne({ _id: 'p1' })).toEqual({ _id: 'p1', name: 'two', _position: position(11) });
      });

      it('lets concurrent upserts of one _id insert once and update for the rest', async () => {
        const counters = store.collection('counters');
        const results = await Promise.all(
          Array.from({ length: 8 }, () => counters.updateOne({ _id: 'c1' }, { $inc: { n: 1 }, $setOnInsert: { created: true } }, { upsert: true })),
        );
        expect(results.filter((r) => r.upserted)).toHaveLength(1);
        expect(await counters.find()).toEqual([{ _id: 'c1', n: 8, created: true }]);
      });

      it('throws DuplicateIdError for an upsert whose filter misses an _id that is taken', async () => {
        const projects = store.collection('projects');
        await projects.updateOne({ _id: 'p1' }, { $setOnInsert: { _position: position(10) } }, { upsert: true });
        await expect(
          projects.updateOne({ _id: 'p1', _position: { $lt: position(10) } }, { $set: { _position: position(10) } }, { upsert: true }),
        ).rejects.toBeInstanceOf(DuplicateIdError);
      });
    });

    describe('updateMany', () => {
      it('updates every matching document and counts matches and modifications', async () => {
        await seed(col, samples);
        await col.updateOne({ _id: 's1' }, { $set: { reviewed: true } });
        expect(await col.updateMany({ label: 'cat' }, { $set: { reviewed: true } })).toEqual({
          matched: 2,
          modified: 1,
          upserted: false,
        });
        expect(await col.count({ reviewed: true })).toBe(2);
      });

      it('applies a $pull condition to every matching document', async () => {
        await seed(col, samples);
        const result = await col.updateMany({ 'device.kind': 'linux' }, { $pull: { windows: { start: 0 } } });
        expect(result).toEqual({ matched: 2, modified: 2, upserted: false });
        expect((await col.find({}, { sort: { _id: 1 } })).map((doc) => doc.windows)).toEqual([
          [],
          [{ start: 5, ok: false }],
          [],
          [{ start: 2, ok: true }],
        ]);
      });

      it('updates documents selected by $elemMatch', async () => {
        await seed(col, samples);
        const result = await col.updateMany({ windows: { $elemMatch: { ok: true, start: { $gte: 0 } } } }, { $set: { good: true } });
        expect(result).toEqual({ matched: 2, modified: 2, upserted: false });
        expect(ids(await col.find({ good: true }, { sort: { _id: 1 } }))).toEqual(['s1', 's4']);
      });

      it('matches nothing without inserting anything', async () => {
        expect(await col.updateMany({ label: 'cat' }, { $set: { x: 1 } })).toEqual({ matched: 0, modified: 0, upserted: false });
        expect(await col.count()).toBe(0);
      });
    });

    describe('deleteOne and deleteMany', () => {
      it('deleteOne removes one matching document', async () => {
        await seed(col, samples);
        expect(await col.deleteOne({ label: 'cat' })).toBe(1);
        expect(await col.count({ label: 'cat' })).toBe(1);
        expect(await col.deleteOne({ label: 'fish' })).toBe(0);
      });

      it('deleteMany removes every matching document and says how many', async () => {
        await seed(col, samples);
        expect(await col.deleteMany({ 'device.kind': 'mcu' })).toBe(2);
        expect(ids(await col.find({}, { sort: { _id: 1 } }))).toEqual(['s1', 's4']);
        expect(await col.deleteMany({ windows: { $elemMatch: { ok: true, start: 2 } } })).toBe(1);
        expect(await col.deleteMany({})).toBe(1);
        expect(await col.count()).toBe(0);
      });
    });

    describe('documents', () => {
      it("are not the store's: changing a result (refused, or on a copy) or an update value afterwards leaves the store unchanged", async () => {
        // A store hands out copies, or the same documents deep-frozen (Collection.find): a change
        // either throws a TypeError or changes the reader's copy only.
        const tryChange = (change: () => unknown) => {
          try {
            change();
          } catch (error) {
            expect(error).toBeInstanceOf(TypeError);
          }
        };
        const windows = [{ start: 1, ok: true }];
        await col.updateOne({ _id: 'x' }, { $set: { windows, tags: ['a'] } }, { upsert: true });
        windows.push({ start: 2, ok: false });
        for (const read of [() => col.find({ _id: 'x' }), () => col.find({ tags: 'a' }), () => col.find({ _id: 'x' })]) {
          const [found] = await read();
          tryChange(() => found!.tags.push('mutated'));
          tryChange(() => (found!.windows[0]!.ok = false));
          tryChange(() => delete (found as Partial<Sample>).label);
          const one = await col.findOne({ _id: 'x' });
          tryChange(() => (one!.tags.length = 0));
          const all = await col.find({});
          all.length = 0;
          expect(await col.findOne({ _id: 'x' })).toEqual({ _id: 'x', windows: [{ start: 1, ok: true }], tags: ['a'] });
          expect(await col.find({})).toHaveLength(1);
        }
      });

      it('leave out fields set to undefined', async () => {
        await col.updateOne({ _id: 'x' }, { $set: { label: 'cat', note: undefined } }, { upsert: true });
        expect(await col.findOne({ _id: 'x' })).toStrictEqual({ _id: 'x', label: 'cat' });
      });

      it('leave a field alone when an update gives it undefined, in any operator (as the MongoDB driver leaves it out)', async () => {
        await col.updateOne({ _id: 'x' }, { $set: { label: 'cat', note: 'kept', n: 1, gone: 'kept too', list: [1] } }, { upsert: true });
        const result = await col.updateOne({ _id: 'x' }, { $set: { note: undefined, label: 'dog' }, $inc: { n: undefined }, $unset: { gone: undefined }, $push: { list: undefined } });
        expect(result.matched).toBe(1);
        expect(await col.findOne({ _id: 'x' })).toStrictEqual({ _id: 'x', label: 'dog', note: 'kept', n: 1, gone: 'kept too', list: [1] });
        await col.updateMany({ label: 'dog' }, { $set: { note: undefined, n: 2 } });
        expect(await col.findOne({ _id: 'x' })).toStrictEqual({ _id: 'x', label: 'dog', note: 'kept', n: 2, gone: 'kept too', list: [1] });
        // Nothing but undefined fields: matched, changed nothing. An operator given undefined is none.
        expect(await col.updateOne({ _id: 'x' }, { $set: { note: undefined } })).toMatchObject({ matched: 1, modified: 0 });
        await expect(col.updateOne({ _id: 'x' }, { $set: undefined })).rejects.toThrow(/at least one operator|atomic operators/);
        expect(await col.findOne({ _id: 'x' })).toStrictEqual({ _id: 'x', label: 'dog', note: 'kept', n: 2, gone: 'kept too', list: [1] });
      });

      it('keep their _id unique within a collection but not across collections', async () => {
        await col.updateOne({ _id: 'x' }, { $set: { label: 'cat' } }, { upsert: true });
        await col.updateOne({ _id: 'x' }, { $set: { label: 'dog' } }, { upsert: true });
        await store.collection('other').updateOne({ _id: 'x' }, { $set: { label: 'bird' } }, { upsert: true });
        expect(await col.find()).toEqual([{ _id: 'x', label: 'dog' }]);
        expect(await store.collection('other').find()).toEqual([{ _id: 'x', label: 'bird' }]);
      });

      it('accept numeric ids as a different key from their string form', async () => {
        const numbered = store.collection('numbered');
        await numbered.updateOne({ _id: 1 }, { $set: { n: 'number' } }, { upsert: true });
        await numbered.updateOne({ _id: '1' }, { $set: { n: 'string' } }, { upsert: true });
        expect(await numbered.findOne({ _id: 1 })).toEqual({ _id: 1, n: 'number' });
        expect(await numbered.count()).toBe(2);
      });
    });

    describe('checkpoints', () => {
      it('are undefined before the first one is stored', async () => {
        expect(await store.getCheckpoint('samples')).toBeUndefined();
      });

      it('answer the last position stored, per name', async () => {
        await store.setCheckpoint('samples', 5n);
        await store.setCheckpoint('samples', 7n);
        await store.setCheckpoint('projects', 0n);
        expect(await store.getCheckpoint('samples')).toBe(7n);
        expect(await store.getCheckpoint('projects')).toBe(0n);
      });

      it('land in the order they were set, even when set concurrently', async () => {
        await Promise.all([1n, 2n, 3n, 4n].map((position) => store.setCheckpoint('samples', position)));
        expect(await store.getCheckpoint('samples')).toBe(4n);
      });

      it('round-trip large bigints exactly', async () => {
        for (const position of [2n ** 60n + 7n, 2n ** 64n + 1n, 10n ** 30n + 3n]) {
          await store.setCheckpoint('big', position);
          expect(await store.getCheckpoint('big')).toBe(position);
        }
      });
    });

    describe('commit', () => {
      it('puts whole documents, inserting absent ones and replacing present ones field for field', async () => {
        await seed(col, samples);
        await store.commit(
          [
            { kind: 'put', collection: 'samples', doc: { _id: 's1', label: 'lion', length: 1 } },
            { kind: 'put', collection: 'samples', doc: { _id: 's9', label: 'new', length: 9, tags: [], windows: [], device: { name: 'x', kind: 'y' } } },
          ],
          [],
        );
        expect(await col.findOne({ _id: 's1' })).toEqual({ _id: 's1', label: 'lion', length: 1 });
        expect(await col.findOne({ label: 'new' })).toMatchObject({ _id: 's9', length: 9, device: { name: 'x', kind: 'y' } });
        expect(await col.count()).toBe(5);
        // A committed document is an ordinary one afterwards.
        expect(await col.updateOne({ _id: 's9', length: { $lt: 10 } }, { $inc: { length: 1 } })).toEqual({ matched: 1, modified: 1, upserted: false });
        expect((await col.findOne({ _id: 's9' }))?.length).toBe(10);
      });

      it('deletes by id, and applies the ops in order', async () => {
        await seed(col, samples);
        await store.commit(
          [
            { kind: 'delete', collection: 'samples', id: 's2' },
            { kind: 'put', collection: 'samples', doc: { _id: 's3', label: 'first' } },
            { kind: 'delete', collection: 'samples', id: 's3' },
            { kind: 'delete', collection: 'samples', id: 's4' },
            { kind: 'put', collection: 'samples', doc: { _id: 's4', label: 'back' } },
            { kind: 'delete', collection: 'samples', id: 'never-there' },
          ],
          [],
        );
        expect(ids(await col.find({}, { sort: { _id: 1 } }))).toEqual(['s1', 's4']);
        expect(await col.findOne({ _id: 's4' })).toEqual({ _id: 's4', label: 'back' });
      });

      it('writes several collections in one commit, keeping numeric and string ids apart', async () => {
        await store.commit(
          [
            { kind: 'put', collection: 'projects', doc: { _id: 1, name: 'one' } },
            { kind: 'put', collection: 'samples', doc: { _id: 'x', label: 'cat' } },
            { kind: 'put', collection: 'projects', doc: { _id: '1', name: 'string one' } },
          ],
          [],
        );
        expect(await store.collection('projects').find({}, { sort: { name: 1 } })).toEqual([{ _id: 1, name: 'one' }, { _id: '1', name: 'string one' }]);
        expect(await col.find()).toEqual([{ _id: 'x', label: 'cat' }]);
      });

      it('stores the checkpoints, with the identity of their log when given one', async () => {
        await store.commit([{ kind: 'put', collection: 'samples', doc: { _id: 'a', label: 'cat' } }], [
          { name: 'samples', position: 2n ** 64n + 3n, store: 'log-1' },
          { name: 'other', position: 5n },
        ]);
        expect(await store.readCheckpoint('samples')).toEqual({ position: 2n ** 64n + 3n, store: 'log-1' });
        expect(await store.readCheckpoint('other')).toEqual({ position: 5n });
        // Checkpoints alone, and nothing at all, are commits too.
        await store.commit([], [{ name: 'other', position: 6n, store: 'log-1' }]);
        await store.commit([], []);
        expect(await store.readCheckpoint('other')).toEqual({ position: 6n, store: 'log-1' });
        expect(await col.count()).toBe(1);
      });

      it('stores copies: changing a committed document afterwards leaves the store unchanged', async () => {
        const doc = { _id: 'c', label: 'cat', tags: ['a'] };
        await store.commit([{ kind: 'put', collection: 'samples', doc }], []);
        doc.tags.push('b');
        doc.label = 'dog';
        expect(await col.findOne({ _id: 'c' })).toEqual({ _id: 'c', label: 'cat', tags: ['a'] });
      });

      it('refuses an op on the checkpoints collection or without a usable id, and changes nothing', async () => {
        await seed(col, samples);
        await expect(store.commit([{ kind: 'delete', collection: 'samples', id: 's1' }, { kind: 'put', collection: 'checkpoints', doc: { _id: 'samples', position: '9' } }], [{ name: 'samples', position: 9n }])).rejects.toThrow(/reserved/);
        await expect(store.commit([{ kind: 'delete', collection: 'samples', id: 's1' }, { kind: 'put', collection: 'samples', doc: { _id: { no: 1 } } as never }], [])).rejects.toThrow(/id/);
        expect(await col.count()).toBe(4);
        expect(await store.getCheckpoint('samples')).toBeUndefined();
      });

      it('keep a client\'s "__proto__" key as a key, by upsert and by commit', async () => {
        const metadata = JSON.parse('{"__proto__": "x", "a": 1}') as Record<string, unknown>;
        await col.updateOne({ _id: 'u' }, { $setOnInsert: { metadata } }, { upsert: true });
        await store.commit([{ kind: 'put', collection: 'samples', doc: { _id: 'c', metadata } }], []);
        for (const id of ['u', 'c']) {
          const stored = (await col.findOne({ _id: id }))?.metadata as Record<string, unknown>;
          expect(Object.keys(stored).sort(), id).toEqual(['__proto__', 'a']);
          expect(Object.getOwnPropertyDescriptor(stored, '__proto__')?.value, id).toBe('x');
        }
      });

      it('writes a large batch whole', async () => {
        const docs = Array.from({ length: 1500 }, (_, i) => ({ _id: `d${i}`, label: i % 2 ? 'odd' : 'even', length: i }));
        await store.commit(docs.map((doc) => ({ kind: 'put' as const, collection: 'samples', doc })), [{ name: 'samples', position: 1500n }]);
        expect(await col.count({ label: 'odd' })).toBe(750);
        expect(await col.findOne({ _id: 'd1499' })).toEqual({ _id: 'd1499', label: 'odd', length: 1499 });
        expect(await store.getCheckpoint('samples')).toBe(1500n);
      });
    });

    describe('walk', () => {
      it('gives every document of a collection once, in pages of at most the size asked, and nothing for an empty one', async () => {
        const docs = Array.from({ length: 23 }, (_, i) => ({ _id: i % 3 === 0 ? i : `w-${i}`, n: i }));
        await store.commit(docs.map((doc) => ({ kind: 'put' as const, collection: 'walked', doc })), []);
        const sizes: number[] = [];
        const seen: unknown[] = [];
        for await (const page of store.walk('walked', 5)) {
          sizes.push(page.length);
          seen.push(...page.map((d) => d.n));
        }
        expect(sizes.every((n) => n >= 1 && n <= 5)).toBe(true);
        expect(sizes.reduce((a, b) => a + b, 0)).toBe(23);
        expect([...seen].sort((a, b) => Number(a) - Number(b))).toEqual(docs.map((d) => d.n));
        const empty: unknown[] = [];
        for await (const page of store.walk('never-written', 5)) empty.push(page);
        expect(empty).toEqual([]);
      });
    });

    describe('dropAll', () => {
      it('empties every collection and forgets every checkpoint', async () => {
        await seed(col, samples);
        await store.collection('projects').updateOne({ _id: 'p1' }, { $set: { name: 'one' } }, { upsert: true });
        await store.setCheckpoint('samples', 42n);
        await store.dropAll();
        expect(await col.count()).toBe(0);
        expect(await store.collection('projects').find()).toEqual([]);
        expect(await store.getCheckpoint('samples')).toBeUndefined();
      });

      it('leaves collections usable through the handles given out before', async () => {
        await seed(col, samples);
        await store.dropAll();
        await col.updateOne({ _id: 'again' }, { $set: { label: 'cat' } }, { upsert: true });
        expect(await store.collection('samples').find()).toEqual([{ _id: 'again', label: 'cat' }]);
      });
    });

    // Answers are kept under the mark (api/http/readModelMemo.ts): a write it misses would serve stale data.
    describe('changeMark', () => {
      const markOf = (): number => {
        if (!store.changeMark) throw new Error('no change mark');
        return store.changeMark();
      };
      /** Each write must move the mark; each read must not. */
      const writes: [string, () => Promise<unknown>][] = [
        ['an upsert that inserts', () => col.updateOne({ _id: 'new' }, { $set: { label: 'owl' } }, { upsert: true })],
        ['an updateOne that changes', () => col.updateOne({ _id: 's1' }, { $set: { label: 'lion' } })],
        ['an updateMany', () => col.updateMany({ label: 'cat' }, { $inc: { length: 1 } })],
        ['a deleteOne', () => col.deleteOne({ _id: 's2' })],
        ['a deleteMany', () => col.deleteMany({ label: 'cat' })],
        ['a commit that puts', () => store.commit([{ kind: 'put', collection: 'projects', doc: { _id: 'p9', name: 'nine' } }], [])],
        ['a commit that deletes', () => store.commit([{ kind: 'delete', collection: 'samples', id: 's4' }], [])],
        ['dropAll', () => store.dropAll()],
      ];

      it('moves with every kind of write and stands still over reads', async () => {
        if (!store.changeMark) return expect(store.changeMark).toBeUndefined();
        for (const [what, write] of writes) {
          await seed(col, samples);
          const before = markOf();
          await col.find({ label: 'cat' });
          await col.findOne({ _id: 's1' });
          await col.count();
          expect(markOf(), `a read moved the mark (before ${what})`).toBe(before);
          await write();
          expect(markOf(), what).not.toBe(before);
          await store.dropAll();
        }
      });

      it('never comes back to a mark given out before', async () => {
        if (!store.changeMark) return expect(store.changeMark).toBeUndefined();
        const seen = new Set([markOf()]);
        for (let i = 0; i < 20; i++) {
          await col.updateOne({ _id: `d${i % 3}` }, { $set: { length: i } }, { upsert: true });
          const mark = markOf();
          expect(seen.has(mark)).toBe(false);
          seen.add(mark);
        }
      });
    });
  });
}
