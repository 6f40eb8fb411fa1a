// The comparison behind `npm run rebuild -- --verify` (projections/readModelCheck.ts): every
// difference found, whichever side holds the document, across pages and store kinds, and a walk
// that costs each page its own size (it decoded the whole collection for every page before).
import { describe, expect, it } from 'vitest';
import { allProjections } from '../../projections';
import { DEVICES } from '../../projections/devices/deviceDocument';
import { compareReadModels } from '../../projections/readModelCheck';
import { readModelIndexes } from '../../projections/readModelIndexes';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import type { Document, ReadStore } from '../../stores/readstore/readStore';
import { SqliteReadStore } from '../../stores/readstore/sqliteReadStore';

const devicesOnly = allProjections.filter((p) => p.name === 'devices');

async function fill(store: ReadStore, docs: Document[]): Promise<void> {
  await store.commit(docs.map((doc) => ({ kind: 'put' as const, collection: DEVICES, doc })), []);
}

describe('comparing read models with a rebuild', () => {
  it('names a changed document, one only live and one only rebuilt, across pages, numeric and string ids, SQLite against memory', async () => {
    expect(devicesOnly.length).toBe(1);
    const docs: Document[] = Array.from({ length: 2500 }, (_, i) => ({ _id: i % 2 === 0 ? i : `d-${i}`, name: `device ${i}`, lastSeen: i }));
    const live = SqliteReadStore.open(':memory:', { indexes: readModelIndexes });
    const rebuilt = new MemoryReadStore();
    try {
      await fill(live, docs);
      await fill(rebuilt, docs);
      expect(await compareReadModels(live, rebuilt, devicesOnly)).toMatchObject({ documents: 2500, differing: 0, differences: [] });

      await fill(live, [{ _id: 1700, name: 'renamed', lastSeen: 1700 }, { _id: 'only-live', name: 'x', lastSeen: 0 }]);
      await fill(rebuilt, [{ _id: 'only-rebuilt', name: 'y', lastSeen: 0 }]);
      const comparison = await compareReadModels(live, rebuilt, devicesOnly);
      expect(comparison.differing).toBe(3);
      expect(comparison.documents).toBe(2502);
      expect(comparison.differences).toEqual(
        expect.arrayContaining([
          { collection: DEVICES, id: 1700, live: { _id: 1700, name: 'renamed', lastSeen: 1700 }, rebuilt: { _id: 1700, name: 'device 1700', lastSeen: 1700 } },
          { collection: DEVICES, id: 'only-live', live: { _id: 'only-live', name: 'x', lastSeen: 0 }, rebuilt: undefined },
          { collection: DEVICES, id: 'only-rebuilt', live: undefined, rebuilt: { _id: 'only-rebuilt', name: 'y', lastSeen: 0 } },
        ]),
      );
      // The other way round too: the memory store walked, SQLite looked up.
      expect((await compareReadModels(rebuilt, live, devicesOnly)).differing).toBe(3);
    } finally {
      await live.close();
    }
  });

  it('walks a SQLite collection a page at a time in row order, every document once', async () => {
    const store = SqliteReadStore.open(':memory:', { indexes: readModelIndexes });
    try {
      await fill(store, Array.from({ length: 2345 }, (_, i) => ({ _id: `d-${i}`, n: i })));
      const pages: number[] = [];
      const seen: unknown[] = [];
      for await (const page of store.walk(DEVICES, 1000)) {
        pages.push(page.length);
        seen.push(...page.map((d) => d.n));
      }
      expect(pages).toEqual([1000, 1000, 345]);
      expect(seen).toEqual(Array.from({ length: 2345 }, (_, i) => i));
    } finally {
      await store.close();
    }
  });
});
