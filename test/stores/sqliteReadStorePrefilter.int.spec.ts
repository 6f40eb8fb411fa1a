// Conditions on fields no index holds are narrowed in SQL on the stored JSON (jsonPrefilter.ts) and
// the rows are read one at a time: the answers must still be the memory store's (mingo's), over
// values of every type where the operand's type is expected (arrays, dates, nulls, other types,
// case and non-ASCII letters that fold in other ways), and the walk must keep only the page.
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonPrefilter } from '../../stores/readstore/jsonPrefilter';
import type { ReadModelIndexes } from '../../stores/readstore/indexDeclarations';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import type { Filter, FindOptions, ReadStore } from '../../stores/readstore/readStore';
import { SqliteReadStore } from '../../stores/readstore/sqliteReadStore';

const strings = fc.constantFrom('ab', 'Ab', 'AB', 'aB_x', 'a%b', 'a_b', 'a.b', 'a*b', 'a[b', 'b', '', 'é', 'É', 'ſt', 'st', 'St', '\u212Aelvin', 'kelvin', 'K', '10', '9');
const scalar = fc.oneof(fc.integer({ min: -3, max: 12 }), fc.double({ min: -3, max: 3, noNaN: true, noDefaultInfinity: true }), strings, fc.constantFrom(true, false, null, 0, 1, -0));
const value = fc.oneof({ weight: 8, arbitrary: scalar }, { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) }, { weight: 1, arbitrary: fc.constantFrom(new Date('2026-01-02T03:04:05Z'), { x: 'ab' }) });
const documents = fc.uniqueArray(
  fc.record({ _id: fc.integer({ min: 1, max: 40 }), group: fc.integer({ min: 1, max: 2 }), name: value, size: value, ok: value, n: fc.record({ x: value }, { requiredKeys: [] }) }, { requiredKeys: ['_id', 'group'] }),
  { selector: (d) => d._id, maxLength: 25 },
);

const regex = fc.oneof(
  fc.record({ $regex: fc.constantFrom('^a', '^A', '^ab', '^a%', '^a_', '^a\\.b', '^a\\*', '^a\\[', '^k', '^K', '^s', '^st', '^é', '^1', '^', 'b', '^a.b') }),
  fc.record({ $regex: fc.constantFrom('^a', '^AB', '^a%', '^a_b', '^k', '^s', '^S', '^é', '^a\\.b'), $options: fc.constantFrom('i', '', 'm') }),
);
const condition = fc.oneof(
  scalar,
  fc.record({ $eq: scalar }),
  fc.record({ $gt: fc.oneof(fc.integer({ min: -3, max: 12 }), strings) }),
  fc.record({ $gte: fc.integer({ min: -3, max: 12 }), $lt: fc.integer({ min: -3, max: 12 }) }),
  fc.record({ $lte: strings }),
  fc.record({ $ne: scalar }),
  regex,
);
const filter: fc.Arbitrary<Filter> = fc.record({ group: fc.integer({ min: 1, max: 2 }), name: condition, size: condition, ok: condition, 'n.x': condition }, { requiredKeys: [] });
const options: fc.Arbitrary<FindOptions> = fc.record(
  { sort: fc.constantFrom<Record<string, 1 | -1>>({ _id: -1 }, { _id: 1 }, { group: 1, _id: -1 }), skip: fc.integer({ min: 0, max: 3 }), limit: fc.integer({ min: 0, max: 4 }) },
  { requiredKeys: [] },
);

// Only group and _id are key columns: every condition on the other fields is left to mingo, narrowed first.
const indexes: ReadModelIndexes = { items: [{ keys: { group: 1, _id: -1 } }] };

async function load(store: ReadStore, initial: readonly Record<string, unknown>[]): Promise<void> {
  const items = store.collection('items');
  for (const { _id, ...fields } of initial) await items.updateOne({ _id }, { $setOnInsert: fields }, { upsert: true });
}

describe('conditions on fields no index holds, on the SQLite read store', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-prefilter-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  // In memory, the walk runs on the store's connection; in a file, from its first row on a connection of its own, in slices.
  for (const where of ['in memory', 'in a file'] as const) {
  it(`find and count as the memory store does, over generated documents and filters (${where})`, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(documents, filter, options, async (initial, f, o) => {
        const memory = new MemoryReadStore();
        const sqlite = SqliteReadStore.open(where === 'in memory' ? ':memory:' : path.join(folder, `run-${run++}.sqlite`), { indexes, answerCache: false, walkHereRows: 0, scanSliceMs: 0 });
        try {
          await load(memory, initial);
          await load(sqlite, initial);
          const answer = async (store: ReadStore) => {
            const items = store.collection('items');
            return [await items.find(f, o), await items.count(f), await items.findOne(f)];
          };
          expect(await answer(sqlite)).toEqual(await answer(memory));
        } finally {
          await sqlite.close();
        }
      }),
      { numRuns: where === 'in memory' ? 400 : 150 },
    );
  });
  }

  it('narrows in SQL only what SQLite compares as mingo does', () => {
    expect(jsonPrefilter('fileName', { $regex: '^idle\\.5', $options: 'i' })).toHaveLength(1);
    expect(jsonPrefilter('signatureValidate', false)).toHaveLength(1);
    expect(jsonPrefilter('totalLengthMs', { $gte: 1000, $lte: 2000 })).toHaveLength(2);
    // Not narrowed: a pattern that is no literal prefix, other options, non-ASCII text, odd paths, NaN.
    expect(jsonPrefilter('fileName', { $regex: 'idle' })).toEqual([]);
    expect(jsonPrefilter('fileName', { $regex: '^idle', $options: 'im' })).toEqual([]);
    expect(jsonPrefilter('fileName', { $regex: '^é', $options: 'i' })).toEqual([]);
    expect(jsonPrefilter('label', 'é')).toEqual([]);
    expect(jsonPrefilter("a'b", 'x')).toEqual([]);
    expect(jsonPrefilter('a', { $gt: Number.NaN })).toEqual([]);
  });

  it('serves the event loop while a long walk reads a file', async () => {
    // Slices of no time: the walk lets the event loop in every 64 rows, whatever this machine's speed.
    const sqlite = SqliteReadStore.open(path.join(folder, 'long-walk.sqlite'), { indexes, answerCache: false, scanSliceMs: 0 });
    try {
      const padding = 'x'.repeat(2000);
      await sqlite.commit(Array.from({ length: 20_000 }, (_, i) => ({ kind: 'put' as const, collection: 'items', doc: { _id: i + 1, group: 1, ok: true, padding } })), []);
      await sqlite.commit(Array.from({ length: 500 }, (_, i) => ({ kind: 'put' as const, collection: 'items', doc: { _id: 30_001 + i, group: 2, ok: true, padding } })), []);
      let turns = 0;
      let walking = true;
      const tick = (): void => {
        turns += 1;
        if (walking) setImmediate(tick);
      };
      setImmediate(tick);
      const items = sqlite.collection('items');
      // Every row decoded and tested by mingo ($ne is not narrowed in SQL).
      let started = turns;
      expect(await items.count({ group: 1, ok: { $ne: false } })).toBe(20_000);
      expect(turns - started).toBeGreaterThan(100);
      // No row passing the narrowing in SQL: the walk still comes back to JavaScript at every row.
      started = turns;
      expect(await items.find({ group: 1, ok: false }, { sort: { _id: -1 }, limit: 20 })).toEqual([]);
      expect(turns - started).toBeGreaterThan(100);
      // A walk shorter than the rows read here first stays on the store's connection, whole: no slices.
      started = turns;
      expect(await items.count({ group: 2, ok: { $ne: false } })).toBe(500);
      expect(turns - started).toBe(0);
      walking = false;
    } finally {
      await sqlite.close();
    }
  });

  it('reads a page of a large collection filtered on such a field without holding the rest', async () => {
    const sqlite = SqliteReadStore.open(':memory:', { indexes, answerCache: false });
    try {
      const items = sqlite.collection('items');
      const padding = 'x'.repeat(2000);
      await sqlite.commit(
        Array.from({ length: 20_000 }, (_, i) => ({ kind: 'put' as const, collection: 'items', doc: { _id: i + 1, group: 1, name: `file.${i}.json`, ok: i % 1000 !== 0, padding } })),
        [],
      );
      const before = process.memoryUsage().heapUsed;
      const page = await items.find({ group: 1, ok: false }, { sort: { _id: -1 }, limit: 5 });
      const count = await items.count({ group: 1, name: { $regex: '^FILE\\.1', $options: 'i' } });
      const grown = process.memoryUsage().heapUsed - before;
      expect(page.map((d) => d._id)).toEqual([19001, 18001, 17001, 16001, 15001]);
      expect(count).toBe(1 + 10 + 100 + 1000 + 10000);
      // 20,000 documents of 2 KB decoded at once would be 40 MB and more; a page and a count keep a handful.
      expect(grown).toBeLessThan(20 * 1024 * 1024);
    } finally {
      await sqlite.close();
    }
  });
});
