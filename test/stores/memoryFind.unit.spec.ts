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
  // The replay guards: a comparison, and a negated one that also matches a missing field.
  fc.record({ group: fc.integer({ min: 1, max: 3 }), a: fc.record({ $lt: fc.constantFrom(0, 2, 'b') }) }),
  fc.record({ a: fc.record({ $not: fc.record({ $gte: fc.constantFrom(-1, 1, 'a', 'b') }) }) }),
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

// Writes after the first query, so that indexes built by it must follow them.
const change = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), id: fc.integer({ min: 1, max: 40 }), field: fc.constantFrom('group', 'a', 'b'), value: scalar }),
  fc.record({ kind: fc.constant('delete' as const), id: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ kind: fc.constant('insert' as const), id: fc.integer({ min: 41, max: 60 }), group: fc.integer({ min: 1, max: 3 }), a: fc.oneof(scalar, fc.array(scalar, { maxLength: 3 })) }),
);

describe('MemoryCollection.find on equality filters', () => {
  for (const indexAfter of [256, 0]) {
  it(`answers what mingo answers (${indexAfter === 0 ? 'through equality indexes, kept up to date by writes' : 'scanning'})`, async () => {
    await fc.assert(
      fc.asyncProperty(docs, filter, options, fc.array(change, { maxLength: 8 }), async (initial, f, o, changes) => {
        const store = new MemoryReadStore({ indexAfter });
        const collection = store.collection('things');
        for (const d of initial) await collection.updateOne({ _id: d._id }, { $set: { ...d } }, { upsert: true });
        // A first query builds the indexes; the writes after it must keep them true.
        await collection.find(f, o);
        await collection.count({ group: 1 });
        const all = new Map<number, Record<string, unknown>>(initial.map((d) => [d._id, { ...d }]));
        for (const c of changes) {
          if (c.kind === 'set') {
            await collection.updateOne({ _id: c.id }, { $set: { [c.field]: c.value } });
            const d = all.get(c.id);
            if (d) d[c.field] = c.value;
          } else if (c.kind === 'delete') {
            await collection.deleteOne({ _id: c.id });
            all.delete(c.id);
          } else if (!all.has(c.id)) {
            await collection.updateOne({ _id: c.id }, { $set: { group: c.group, a: c.a } }, { upsert: true });
            all.set(c.id, { _id: c.id, group: c.group, a: c.a });
          }
        }
        const reference = [...all.values()] as Document[];
        let cursor = mingoFind(reference, f);
        if (o.sort) cursor = cursor.sort(o.sort);
        if (o.skip) cursor = cursor.skip(o.skip);
        if (o.limit) cursor = cursor.limit(o.limit);
        // Ties in the sort may come in any order: compare the sort keys and the sets of ids.
        const got = await collection.find(f, o);
        const want = cursor.all() as Document[];
        const keysOf = (list: Document[]) => list.map((d) => Object.keys(o.sort ?? {}).map((k) => d[k] ?? null));
        expect(keysOf(got)).toEqual(keysOf(want));
        if (!o.skip && !o.limit) expect(got.map((d) => d._id).sort()).toEqual(want.map((d) => d._id).sort());
        expect(await collection.count(f)).toBe(mingoFind(reference, f).all().length);
      }),
      { numRuns: Number(process.env.MEMORY_FIND_RUNS ?? 1500) },
    );
  });
  }
});
