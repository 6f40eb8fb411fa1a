// The SQLite read store must answer what the memory store (mingo) answers, also where it lets SQL
// filter, sort, page and count through its indexes: over generated collections (scalars of every
// type, nulls, missing fields, and arrays where a scalar is expected), generated filters and sorts,
// and writes between the queries.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReadModelIndexes } from '../../stores/readstore/indexDeclarations';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import type { Filter, FindOptions, ReadStore } from '../../stores/readstore/readStore';
import { SqliteReadStore } from '../../stores/readstore/sqliteReadStore';

const scalar = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.double({ min: -3, max: 3, noNaN: true, noDefaultInfinity: true }), fc.constantFrom('a', 'b', 'B', 'c', '', '1', true, false, null));
const withArrays = fc.oneof({ weight: 6, arbitrary: scalar }, { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) });
const documents = (value: fc.Arbitrary<unknown>) => fc.uniqueArray(fc.record(
  {
    _id: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.constantFrom('x', 'y', 'z', '7')),
    group: fc.integer({ min: 1, max: 3 }),
    a: value,
    b: scalar,
    tags: fc.array(fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom('t', 'u')), { maxLength: 3 }),
    n: fc.record({ x: value }, { requiredKeys: [] }),
  },
  { requiredKeys: ['_id', 'group'] },
), { selector: (d) => d._id, maxLength: 20 });

const condition = fc.oneof(
  scalar,
  fc.record({ $eq: scalar }),
  fc.record({ $ne: scalar }),
  fc.record({ $in: fc.array(scalar, { maxLength: 3 }) }),
  fc.record({ $gt: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('a', 'b')) }),
  fc.record({ $gte: fc.integer({ min: -3, max: 3 }), $lt: fc.integer({ min: -3, max: 3 }) }),
  fc.record({ $lte: fc.constantFrom('a', 'b', 'c') }),
  fc.record({ $exists: fc.boolean() }),
);
const filter: fc.Arbitrary<Filter> = fc.record(
  {
    group: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.record({ $in: fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 2 }) })),
    a: condition,
    b: condition,
    'n.x': condition,
    tags: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constant('t'), fc.record({ $in: fc.array(fc.constantFrom(0, 1, 't'), { maxLength: 2 }) })),
    $or: fc.array(fc.record({ a: condition, b: condition, group: fc.integer({ min: 1, max: 3 }) }, { requiredKeys: [] }), { minLength: 1, maxLength: 3 }),
    _id: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.record({ $in: fc.array(fc.oneof(fc.integer({ min: 1, max: 30 }), fc.constant('x')), { maxLength: 4 }) }), fc.record({ $gt: fc.integer({ min: 1, max: 30 }) })),
  },
  { requiredKeys: [] },
);
const direction = fc.constantFrom(1 as const, -1 as const);
const options: fc.Arbitrary<FindOptions> = fc.record(
  {
    sort: fc.oneof(
      fc.record({ a: direction }),
      fc.record({ b: direction, _id: direction }),
      fc.record({ group: direction, b: direction }),
      fc.record({ 'n.x': direction }),
      fc.record({ _id: direction }),
    ),
    skip: fc.integer({ min: 0, max: 4 }),
    limit: fc.integer({ min: 0, max: 4 }),
  },
  { requiredKeys: [] },
);
const change = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), filter, field: fc.constantFrom('group', 'a', 'b', 'n.x'), value: withArrays }),
  fc.record({ kind: fc.constant('delete' as const), filter }),
  fc.record({ kind: fc.constant('upsert' as const), id: fc.integer({ min: 31, max: 40 }), a: withArrays }),
);

const indexes: ReadModelIndexes = {
  items: [{ keys: { group: 1, b: 1, _id: -1 } }, { keys: { a: 1 } }, { keys: { 'n.x': -1 } }, { keys: { tags: 1 }, array: true }],
};

async function load(store: ReadStore, initial: readonly Record<string, unknown>[]): Promise<void> {
  const items = store.collection('items');
  for (const { _id, ...fields } of initial) await items.updateOne({ _id }, { $setOnInsert: fields }, { upsert: true });
}

describe('SqliteReadStore compared with MemoryReadStore', () => {
  // Without arrays in scalar fields SQL answers whole queries; with them, mingo takes over those rows.
  for (const [docs, kind] of [[documents(scalar), 'only scalars in indexed fields'], [documents(withArrays), 'arrays in some indexed fields']] as const) {
  it(`finds, counts and writes alike over generated documents and filters (${kind})`, async () => {
    await fc.assert(
      fc.asyncProperty(docs, filter, options, fc.array(change, { maxLength: 4 }), async (initial, f, o, changes) => {
        const memory = new MemoryReadStore();
        const sqlite = SqliteReadStore.open(':memory:', { indexes });
        try {
          await load(memory, initial);
          await load(sqlite, initial);
          const answer = async (store: ReadStore) => {
            const items = store.collection('items');
            const out: unknown[] = [await items.find(f, o), await items.count(f), await items.findOne(f)];
            for (const c of changes) {
              if (c.kind === 'set') out.push(await items.updateMany(c.filter, { $set: { [c.field]: c.value } }), await items.updateOne(c.filter, { $inc: { hits: 1 } }));
              else if (c.kind === 'delete') out.push(await items.deleteOne(c.filter));
              else out.push(await items.updateOne({ _id: c.id }, { $set: { a: c.a } }, { upsert: true }));
              out.push(await items.find(f, o), await items.count(f));
            }
            out.push(await items.find({}, { sort: { _id: 1 } }));
            return out;
          };
          expect(await answer(sqlite)).toEqual(await answer(memory));
        } finally {
          await sqlite.close();
        }
      }),
      { numRuns: 300 },
    );
  });
  }
});
