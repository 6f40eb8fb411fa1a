// The memory read store answers equality finds (with sort, skip and limit) without mingo; over
// generated collections and queries it must answer what mingo answers.
import fc from 'fast-check';
import { find as mingoFind } from 'mingo';
import { describe, expect, it } from 'vitest';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import type { Document, FindOptions } from '../../stores/readstore/readStore';

const scalar = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('a', 'b', 'c', true, false, null));
const docs = fc.uniqueArray(
  fc.record({ _id: fc.integer({ min: 1, max: 40 }), group: fc.integer({ min: 1, max: 3 }), a: scalar, b: scalar }, { requiredKeys: ['_id', 'group'] }),
  { selector: (d) => d._id, maxLength: 25 },
);
const filter = fc.oneof(
  fc.record({ group: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ _id: fc.record({ $in: fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 6 }) }) }),
  fc.record({ group: fc.integer({ min: 1, max: 3 }), a: fc.constantFrom(1, 'a', true) }),
  fc.constant({}),
);
const options: fc.Arbitrary<FindOptions> = fc.record(
  {
    sort: fc.oneof(fc.constant({ a: 1 as const }), fc.constant({ a: -1 as const, _id: 1 as const }), fc.constant({ b: 1 as const, a: -1 as const }), fc.constant({ _id: -1 as const })),
    skip: fc.integer({ min: 0, max: 5 }),
    limit: fc.integer({ min: 0, max: 5 }),
  },
  { requiredKeys: [] },
);

describe('MemoryCollection.find on equality filters', () => {
  it('answers what mingo answers', async () => {
    await fc.assert(
      fc.asyncProperty(docs, filter, options, async (all, f, o) => {
        const store = new MemoryReadStore();
        const collection = store.collection('things');
        for (const d of all) await collection.updateOne({ _id: d._id }, { $set: { ...d } }, { upsert: true });
        let cursor = mingoFind(all as Document[], f);
        if (o.sort) cursor = cursor.sort(o.sort);
        if (o.skip) cursor = cursor.skip(o.skip);
        if (o.limit) cursor = cursor.limit(o.limit);
        // Ties in the sort may come in any order: compare the sort keys and the sets of ids.
        const got = await collection.find(f, o);
        const want = cursor.all() as Document[];
        const keysOf = (list: Document[]) => list.map((d) => Object.keys(o.sort ?? {}).map((k) => d[k] ?? null));
        expect(keysOf(got)).toEqual(keysOf(want));
        if (!o.skip && !o.limit) expect(got.map((d) => d._id).sort()).toEqual(want.map((d) => d._id).sort());
      }),
      { numRuns: Number(process.env.MEMORY_FIND_RUNS ?? 1500) },
    );
  });
});
