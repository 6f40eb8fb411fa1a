// The SQLite read store against the contract, in a private in-memory database per test; once
// without declared indexes (mingo decides everything on full scans) and once with indexes on the
// contract's fields, so that SQL answers (filters, sorts, paging, counts) are held to the same results.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Document } from '../../stores/readstore/readStore';
import type { ReadModelIndexes } from '../../stores/readstore/indexDeclarations';
import { SqliteReadStore } from '../../stores/readstore/sqliteReadStore';
import { readStoreContract } from './readStore.contract';
import { toExpressionLayout } from '../support/expressionLayout';

readStoreContract('SqliteReadStore', async () => SqliteReadStore.open(':memory:'));

const contractIndexes: ReadModelIndexes = {
  samples: [
    { keys: { label: 1, length: -1 } },
    { keys: { length: 1 } },
    { keys: { 'device.kind': 1, _id: 1 } },
    { keys: { 'windows.start': 1 } },
    { keys: { tags: 1 }, array: true },
  ],
  projects: [{ keys: { owner: 1 } }, { keys: { _position: 1 } }, { keys: { name: 1 } }],
  lists: [{ keys: { values: 1 }, array: true }],
};
readStoreContract('SqliteReadStore with declared indexes', async () => SqliteReadStore.open(':memory:', { indexes: contractIndexes }));

describe('SqliteReadStore on disk', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'sqlite-read-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('gives back dates, bytes, -0, NaN and the infinities wherever they sit, by id, by filter and from its cache', async () => {
    const file = path.join(dir, 'read-models.sqlite');
    const store = SqliteReadStore.open(file, { indexes: contractIndexes });
    const when = new Date('2026-01-02T03:04:05Z');
    const doc = {
      _id: 't1',
      label: 'odd',
      when,
      nested: { deeper: [when, [new Date(0), { at: when, n: -0 }], Buffer.from([9])] },
      numbers: [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 1.5],
      words: ['$date', { text: '$binary' }],
    };
    try {
      await store.commit([{ kind: 'put', collection: 'samples', doc }], []);
      for (let round = 0; round < 2; round++) {
        const byId = await store.collection('samples').findOne({ _id: 't1' });
        const byFilter = await store.collection('samples').find({ label: 'odd' });
        for (const found of [byId, byFilter[0]]) {
          expect(found).toEqual(doc);
          expect(Object.is((found!.numbers as number[])[3], -0)).toBe(true);
          expect(((found!.nested as { deeper: unknown[] }).deeper[1] as unknown[])[0]).toBeInstanceOf(Date);
          expect((found!.nested as { deeper: unknown[] }).deeper[2]).toBeInstanceOf(Buffer);
        }
      }
    } finally {
      await store.close();
    }
  });

  it('keeps documents and checkpoints across a reopen', async () => {
    const file = path.join(dir, 'read-models.sqlite');
    const first = SqliteReadStore.open(file, { indexes: contractIndexes });
    await first.collection('samples').updateOne({ _id: 's1' }, { $set: { label: 'cat', when: new Date('2026-01-02T03:04:05Z'), raw: Buffer.from([1, 2]) } }, { upsert: true });
    await first.setCheckpoint('samples', 2n ** 70n, 'log-1');
    await first.close();
    const second = SqliteReadStore.open(file, { indexes: contractIndexes });
    try {
      expect(await second.collection('samples').findOne({ label: 'cat' })).toEqual({ _id: 's1', label: 'cat', when: new Date('2026-01-02T03:04:05Z'), raw: Buffer.from([1, 2]) });
      expect(await second.readCheckpoint('samples')).toEqual({ position: 2n ** 70n, store: 'log-1' });
    } finally {
      await second.close();
    }
  });

  it('answers alike after the declared indexes change, arrays in a newly indexed field included', async () => {
    const file = path.join(dir, 'read-models.sqlite');
    const before = SqliteReadStore.open(file);
    const items = before.collection('items');
    await items.updateOne({ _id: 1 }, { $set: { kind: 'a', tags: ['x'] } }, { upsert: true });
    await items.updateOne({ _id: 2 }, { $set: { kind: ['a', 'b'], tags: 'y' } }, { upsert: true });
    await items.updateOne({ _id: 3 }, { $set: { kind: 'b', tags: ['x', 'y'] } }, { upsert: true });
    await before.close();
    const after = SqliteReadStore.open(file, { indexes: { items: [{ keys: { kind: 1 } }, { keys: { tags: 1 }, array: true }] } });
    try {
      const again = after.collection('items');
      expect((await again.find({ kind: 'a' }, { sort: { _id: 1 } })).map((d) => d._id)).toEqual([1, 2]);
      expect(await again.count({ kind: 'b' })).toBe(2);
      expect((await again.find({ tags: 'y' }, { sort: { _id: -1 } })).map((d) => d._id)).toEqual([3, 2]);
    } finally {
      await after.close();
    }
  });

  it('moves a file whose index keys were JSON expressions (made before key columns) to key columns at open, answering as before', async () => {
    const file = path.join(dir, 'read-models.sqlite');
    const docs = [
      { _id: 's1', label: 'cat', length: 3, device: { kind: 'phone' }, tags: ['a'] },
      { _id: 's2', label: 'dog', length: 1, device: { kind: 'board' }, tags: ['b'] },
      { _id: 's3', label: 'cat', length: 2, device: 'none', tags: [] },
      { _id: 's4', label: true, length: 5 },
    ];
    const store = SqliteReadStore.open(file, { indexes: contractIndexes });
    for (const doc of docs) await store.collection('samples').updateOne({ _id: doc._id }, { $set: doc }, { upsert: true });
    await store.close();
    toExpressionLayout(file, 'samples', { 'label,length-': ['label', 'length'], length: ['length'] });
    const told: [string, number][] = [];
    const reopened = SqliteReadStore.open(file, { indexes: contractIndexes, onRelayout: (collection, rows) => told.push([collection, rows]) });
    try {
      // Said before the work, which takes seconds on a large collection.
      expect(told).toEqual([['samples', 4]]);
      const samples = reopened.collection('samples');
      expect((await samples.find({ label: 'cat' }, { sort: { length: -1 } })).map((d) => d._id)).toEqual(['s1', 's3']);
      expect((await samples.find({ length: { $gte: 2 } }, { sort: { length: 1 } })).map((d) => d._id)).toEqual(['s3', 's1', 's4']);
      expect((await samples.find({ 'device.kind': 'board' })).map((d) => d._id)).toEqual(['s2']);
      expect((await samples.find({ label: true })).map((d) => d._id)).toEqual(['s4']);
      expect(await samples.count({ label: 'cat' })).toBe(2);
      expect(reopened.explainFind('samples', { label: 'cat' }, { sort: { length: -1 } }).plan.join(' ')).toMatch(/USING INDEX c:samples:label,length-/);
    } finally {
      await reopened.close();
    }
    const check = new Database(file, { readonly: true });
    try {
      // Every declared index is on key columns now, none on the JSON.
      const sql = check.prepare(`SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'c:samples' AND sql IS NOT NULL AND name NOT LIKE '%:irregular'`).pluck().all() as string[];
      expect(sql.length).toBe(4);
      for (const text of sql) expect(text).not.toMatch(/json_extract/);
      expect(check.prepare(`SELECT "k:length" FROM "c:samples" ORDER BY seq`).pluck().all()).toEqual([3, 1, 2, 5]);
    } finally {
      check.close();
    }
  });

  it('refuses index declarations that are not plain dotted paths', () => {
    expect(() => SqliteReadStore.open(':memory:', { indexes: { items: [{ keys: { "a'); DROP TABLE x; --": 1 } }] } })).toThrow(/not a plain dotted path/);
  });
});

/** The declared indexes of a collection present in the file, as another connection sees them. */
function declaredIndexesIn(file: string, collection: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`).all(`c:${collection}`) as { name: string }[];
    return rows.map((r) => r.name).filter((name) => !name.endsWith(':irregular')).sort();
  } finally {
    db.close();
  }
}

describe('SqliteReadStore bulk loads', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'sqlite-bulk-'));
    file = path.join(dir, 'read-models.sqlite');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const declaredIndexes = (collection: string): string[] => declaredIndexesIn(file, collection);

  it('starts empty, builds a collection\'s indexes after its rows or at its first field query, and answers as without', async () => {
    const store = SqliteReadStore.open(file, { indexes: contractIndexes });
    try {
      await store.collection('samples').updateOne({ _id: 'before' }, { $set: { label: 'x' } }, { upsert: true });
      await store.setCheckpoint('samples', 3n);
      await store.dropAllForBulkLoad();
      expect(await store.collection('samples').count()).toBe(0);
      expect(await store.getCheckpoint('samples')).toBeUndefined();
      expect(declaredIndexes('samples')).toEqual([]);
      await store.commit(
        [
          { kind: 'put', collection: 'samples', doc: { _id: 's1', label: 'cat', length: 3 } },
          { kind: 'put', collection: 'samples', doc: { _id: 's2', label: 'dog', length: 1 } },
          { kind: 'put', collection: 'projects', doc: { _id: 1, owner: 'ann' } },
          { kind: 'put', collection: 'projects', doc: { _id: 2, owner: 'bob' } },
        ],
        [{ name: 'samples', position: 4n }],
      );
      // A query on a field builds that collection's indexes first, and only that collection's.
      expect((await store.collection('projects').find({ owner: 'bob' })).map((d) => d._id)).toEqual([2]);
      expect(declaredIndexes('projects')).toEqual(['c:projects:_position', 'c:projects:name', 'c:projects:owner']);
      expect(declaredIndexes('samples')).toEqual([]);
      expect(await store.collection('samples').findOne({ _id: 's2' })).toEqual({ _id: 's2', label: 'dog', length: 1 });
      await store.endBulkLoad();
      expect(declaredIndexes('samples')).toEqual(['c:samples:device.kind,_id', 'c:samples:label,length-', 'c:samples:length', 'c:samples:windows.start']);
      expect((await store.collection('samples').find({ length: { $gt: 0 } }, { sort: { length: 1 } })).map((d) => d._id)).toEqual(['s2', 's1']);
      expect(store.explainFind('samples', { length: { $gt: 0 } }, { sort: { length: 1 } }).plan.join(' ')).toMatch(/USING INDEX/);
      expect(await store.getCheckpoint('samples')).toBe(4n);
    } finally {
      await store.close();
    }
    const reopened = SqliteReadStore.open(file, { indexes: contractIndexes });
    try {
      expect(await reopened.collection('samples').count()).toBe(2);
      expect(await reopened.getCheckpoint('samples')).toBe(4n);
    } finally {
      await reopened.close();
    }
  });

  it('finds every document written during the load by _id, by whichever write, and none that was not', async () => {
    const store = SqliteReadStore.open(file, { indexes: contractIndexes });
    try {
      await store.collection('samples').updateOne({ _id: 'before' }, { $set: { label: 'x' } }, { upsert: true });
      await store.dropAllForBulkLoad();
      expect(await store.collection('samples').findOne({ _id: 'before' })).toBeNull();
      const ids = Array.from({ length: 3000 }, (_, i) => (i % 2 === 0 ? i : `s-${i}`));
      await store.commit(ids.map((_id) => ({ kind: 'put', collection: 'samples', doc: { _id, n: 1 } })), []);
      await store.collection('projects').updateOne({ _id: 7 }, { $set: { name: 'direct' } }, { upsert: true });
      for (const _id of ids) expect(await store.collection('samples').findOne({ _id })).toEqual({ _id, n: 1 });
      expect(await store.collection('projects').findOne({ _id: 7 })).toEqual({ _id: 7, name: 'direct' });
      for (const _id of [1, 'before', 's-0', 3001, 'x']) expect(await store.collection('samples').findOne({ _id })).toBeNull();
      expect(await store.collection('lists').findOne({ _id: 1 })).toBeNull();
      await store.endBulkLoad();
      expect(await store.collection('samples').count()).toBe(3000);
    } finally {
      await store.close();
    }
  });

  it('left unfinished, is dropped at the next open: the read models start over from the log', async () => {
    const store = SqliteReadStore.open(file, { indexes: contractIndexes });
    await store.dropAllForBulkLoad();
    await store.commit([{ kind: 'put', collection: 'samples', doc: { _id: 's1', label: 'cat' } }], [{ name: 'samples', position: 9n }]);
    await store.close();
    const reopened = SqliteReadStore.open(file, { indexes: contractIndexes });
    try {
      expect(await reopened.collection('samples').count()).toBe(0);
      expect(await reopened.getCheckpoint('samples')).toBeUndefined();
      expect(declaredIndexes('samples')).toHaveLength(4);
    } finally {
      await reopened.close();
    }
    // Once only: the next open keeps what was written since.
    const again = SqliteReadStore.open(file, { indexes: contractIndexes });
    try {
      await again.commit([{ kind: 'put', collection: 'samples', doc: { _id: 's2' } }], [{ name: 'samples', position: 1n }]);
    } finally {
      await again.close();
    }
    const last = SqliteReadStore.open(file, { indexes: contractIndexes });
    try {
      expect(await last.getCheckpoint('samples')).toBe(1n);
    } finally {
      await last.close();
    }
  });
});

describe('SqliteReadStore deferred indexes of a first start', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'sqlite-defer-'));
    file = path.join(dir, 'read-models.sqlite');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const declaredIndexes = (collection: string): string[] => declaredIndexesIn(file, collection);
  const SAMPLE_INDEXES = ['c:samples:device.kind,_id', 'c:samples:label,length-', 'c:samples:length', 'c:samples:windows.start'];

  it('on an empty store, builds the indexes after the rows, or at a collection\'s first field query, and answers as without', async () => {
    const store = SqliteReadStore.open(file, { indexes: contractIndexes });
    try {
      expect(declaredIndexes('samples')).toEqual(SAMPLE_INDEXES);
      expect(store.deferIndexesWhileEmpty()).toBe(true);
      expect(declaredIndexes('samples')).toEqual([]);
      expect(declaredIndexes('projects')).toEqual([]);
      await store.commit(
        [
          { kind: 'put', collection: 'samples', doc: { _id: 's1', label: 'cat', length: 3 } },
          { kind: 'put', collection: 'samples', doc: { _id: 's2', label: 'dog', length: 1 } },
          { kind: 'put', collection: 'projects', doc: { _id: 1, owner: 'ann' } },
        ],
        [{ name: 'samples', position: 4n }],
      );
      expect((await store.collection('projects').find({ owner: 'ann' })).map((d) => d._id)).toEqual([1]);
      expect(declaredIndexes('projects')).toEqual(['c:projects:_position', 'c:projects:name', 'c:projects:owner']);
      expect(declaredIndexes('samples')).toEqual([]);
      // Writes stay synced and committed as they come: another connection reads them at once.
      const other = new Database(file, { readonly: true });
      try {
        expect(other.prepare(`SELECT count(*) AS n FROM "c:samples"`).get()).toEqual({ n: 2 });
      } finally {
        other.close();
      }
      store.buildDeferredIndexes();
      expect(declaredIndexes('samples')).toEqual(SAMPLE_INDEXES);
      expect((await store.collection('samples').find({ length: { $gt: 0 } }, { sort: { length: 1 } })).map((d) => d._id)).toEqual(['s2', 's1']);
      expect(store.explainFind('samples', { length: { $gt: 0 } }, { sort: { length: 1 } }).plan.join(' ')).toMatch(/USING INDEX/);
    } finally {
      await store.close();
    }
  });

  it('defers nothing on a store with a checkpoint or a document', async () => {
    const store = SqliteReadStore.open(file, { indexes: contractIndexes });
    try {
      await store.setCheckpoint('samples', 1n);
      expect(store.deferIndexesWhileEmpty()).toBe(false);
      await store.dropAll();
      await store.collection('emails').updateOne({ _id: 'e' }, { $set: { to: 'x' } }, { upsert: true });
      expect(store.deferIndexesWhileEmpty()).toBe(false);
      expect(declaredIndexes('samples')).toEqual(SAMPLE_INDEXES);
    } finally {
      await store.close();
    }
  });

  it('keeps another process on the file from building the indexes while it defers them', async () => {
    const store = SqliteReadStore.open(file, { indexes: contractIndexes });
    try {
      expect(store.deferIndexesWhileEmpty()).toBe(true);
      await store.commit([{ kind: 'put', collection: 'samples', doc: { _id: 's1', label: 'cat', length: 2 } }], [{ name: 'samples', position: 1n }]);
      const other = SqliteReadStore.open(file, { indexes: contractIndexes });
      try {
        expect(declaredIndexes('samples')).toEqual([]);
        // It still answers, from the table's rows.
        expect(await other.collection('samples').find({ label: 'cat' })).toEqual([{ _id: 's1', label: 'cat', length: 2 }]);
        expect(declaredIndexes('samples')).toEqual([]);
        store.buildDeferredIndexes();
        expect(declaredIndexes('samples')).toEqual(SAMPLE_INDEXES);
        // Its next query reads the new schema (an explanation alone would not), and searches them.
        expect((await other.collection('samples').find({ length: { $gt: 0 } }, { sort: { length: 1 } })).map((d) => d._id)).toEqual(['s1']);
        expect(other.explainFind('samples', { length: { $gt: 0 } }, { sort: { length: 1 } }).plan.join(' ')).toMatch(/USING INDEX/);
      } finally {
        await other.close();
      }
    } finally {
      await store.close();
    }
  });

  it('left unfinished, keeps what was written, and the next start resumes the deferral and builds what is missing', async () => {
    const store = SqliteReadStore.open(file, { indexes: contractIndexes });
    expect(store.deferIndexesWhileEmpty()).toBe(true);
    await store.commit([{ kind: 'put', collection: 'samples', doc: { _id: 's1', label: 'cat' } }], [{ name: 'samples', position: 9n }]);
    await store.collection('projects').find({ owner: 'ann' });
    await store.close();
    expect(declaredIndexes('samples')).toEqual([]);
    const reopened = SqliteReadStore.open(file, { indexes: contractIndexes });
    try {
      expect(declaredIndexes('samples')).toEqual([]);
      expect(declaredIndexes('projects')).toEqual(['c:projects:_position', 'c:projects:name', 'c:projects:owner']);
      expect(reopened.deferIndexesWhileEmpty()).toBe(true);
      await reopened.commit([{ kind: 'put', collection: 'samples', doc: { _id: 's2', label: 'dog' } }], [{ name: 'samples', position: 10n }]);
      reopened.buildDeferredIndexes();
      expect(declaredIndexes('samples')).toEqual(SAMPLE_INDEXES);
      expect(declaredIndexes('projects')).toEqual(['c:projects:_position', 'c:projects:name', 'c:projects:owner']);
      expect((await reopened.collection('samples').find({ label: 'cat' })).map((d) => d._id)).toEqual(['s1']);
      expect(await reopened.getCheckpoint('samples')).toBe(10n);
      // Done: a later start defers nothing.
      expect(reopened.deferIndexesWhileEmpty()).toBe(false);
    } finally {
      await reopened.close();
    }
  });
});

describe('SqliteReadStore.commit', () => {
  let store: SqliteReadStore;
  beforeEach(() => {
    store = SqliteReadStore.open(':memory:', { indexes: contractIndexes });
  });
  afterEach(async () => {
    await store.close();
  });

  it('applies puts and deletes in order, then the checkpoints', async () => {
    await store.collection('samples').updateOne({ _id: 'old' }, { $set: { label: 'x' } }, { upsert: true });
    await store.commit(
      [
        { kind: 'put', collection: 'samples', doc: { _id: 's1', label: 'cat', length: 1 } },
        { kind: 'put', collection: 'samples', doc: { _id: 's1', label: 'dog' } },
        { kind: 'delete', collection: 'samples', id: 'old' },
        { kind: 'delete', collection: 'samples', id: 'never-there' },
        { kind: 'put', collection: 'projects', doc: { _id: 7, name: 'p' } },
      ],
      [{ name: 'samples', position: 12n, store: 'log' }, { name: 'projects', position: 12n }],
    );
    expect(await store.collection('samples').find()).toEqual([{ _id: 's1', label: 'dog' }]);
    expect(await store.collection('projects').findOne({ _id: 7 })).toEqual({ _id: 7, name: 'p' });
    expect(await store.readCheckpoint('samples')).toEqual({ position: 12n, store: 'log' });
    expect(await store.readCheckpoint('projects')).toEqual({ position: 12n });
  });

  it('changes nothing, checkpoint included, when one op fails', async () => {
    await store.setCheckpoint('samples', 5n);
    const unserializable = { _id: 's2', size: 1n } as unknown as Document;
    await expect(
      store.commit(
        [
          { kind: 'put', collection: 'samples', doc: { _id: 's1', label: 'cat' } },
          { kind: 'put', collection: 'samples', doc: unserializable },
        ],
        [{ name: 'samples', position: 6n }],
      ),
    ).rejects.toThrow();
    expect(await store.collection('samples').count()).toBe(0);
    expect(await store.getCheckpoint('samples')).toBe(5n);
  });

  it('refuses the reserved checkpoints collection before writing anything', async () => {
    await expect(store.commit([{ kind: 'put', collection: 'checkpoints', doc: { _id: 'x' } }], [{ name: 'a', position: 1n }])).rejects.toThrow(/reserved/);
    expect(await store.getCheckpoint('a')).toBeUndefined();
  });
});

// Writes grouped into one transaction per window: the contract holds, each write still atomic.
readStoreContract('SqliteReadStore with group commits', async () => SqliteReadStore.open(':memory:', { indexes: contractIndexes, groupCommitMs: 5 }));

describe('SqliteReadStore group commits', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'sqlite-group-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('shows another connection the writes of a window at its commit, checkpoint and changes together', async () => {
    const file = path.join(dir, 'read-models.sqlite');
    // Declared, as the service declares every collection: created at open, outside any window.
    const writer = SqliteReadStore.open(file, { indexes: contractIndexes, groupCommitMs: 60_000 });
    const reader = SqliteReadStore.open(file, { indexes: contractIndexes });
    try {
      await writer.commit([{ kind: 'put', collection: 'samples', doc: { _id: 's1', label: 'cat' } }], [{ name: 'samples', position: 3n }]);
      await writer.collection('samples').updateOne({ _id: 's2' }, { $set: { label: 'dog' } }, { upsert: true });
      // The writer reads its own writes at once.
      expect(await writer.collection('samples').count()).toBe(2);
      expect(await reader.collection('samples').count()).toBe(0);
      expect(await reader.getCheckpoint('samples')).toBeUndefined();
      writer.commitGroup();
      // The reader looks for other connections' commits once per turn, and again at each checkpoint it
      // reads: having seen the checkpoint, it sees the changes, in the same turn.
      expect(await reader.getCheckpoint('samples')).toBe(3n);
      expect(await reader.collection('samples').count()).toBe(2);
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  it("shows another connection's commit from the next turn of the event loop", async () => {
    const file = path.join(dir, 'read-models.sqlite');
    const writer = SqliteReadStore.open(file, { indexes: contractIndexes });
    const reader = SqliteReadStore.open(file, { indexes: contractIndexes });
    try {
      expect(await reader.collection('samples').find({ label: 'cat' })).toEqual([]);
      await writer.collection('samples').updateOne({ _id: 's1' }, { $set: { label: 'cat' } }, { upsert: true });
      await new Promise((next) => setImmediate(next));
      expect(await reader.collection('samples').find({ label: 'cat' })).toEqual([{ _id: 's1', label: 'cat' }]);
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  it("moves the change mark at another connection's commit, from the next turn, and not before it commits", async () => {
    const file = path.join(dir, 'read-models.sqlite');
    const writer = SqliteReadStore.open(file, { indexes: contractIndexes, groupCommitMs: 60_000 });
    const reader = SqliteReadStore.open(file, { indexes: contractIndexes });
    const nextTurn = () => new Promise((next) => setImmediate(next));
    try {
      const before = reader.changeMark();
      await writer.collection('samples').updateOne({ _id: 's1' }, { $set: { label: 'cat' } }, { upsert: true });
      await nextTurn();
      // Not committed yet: the reader sees nothing new, and its mark stands.
      expect(reader.changeMark()).toBe(before);
      writer.commitGroup();
      await nextTurn();
      const after = reader.changeMark();
      expect(after).not.toBe(before);
      expect(await reader.collection('samples').count()).toBe(1);
      await nextTurn();
      expect(reader.changeMark()).toBe(after);
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  it('commits a window whose time is up at the next write, though writes follow one another without a pause', async () => {
    const file = path.join(dir, 'read-models.sqlite');
    const writer = SqliteReadStore.open(file, { indexes: contractIndexes, groupCommitMs: 20 });
    const reader = SqliteReadStore.open(file, { indexes: contractIndexes });
    try {
      // Promises alone between the writes: the window's timer cannot run until they stop.
      const started = performance.now();
      let n = 0;
      while (performance.now() - started < 100) await writer.collection('samples').updateOne({ _id: `s${n++}` }, { $set: { label: 'cat' } }, { upsert: true });
      // One more, at least 100 ms after the first: whatever a stalled machine let the loop write before.
      await writer.collection('samples').updateOne({ _id: `s${n++}` }, { $set: { label: 'cat' } }, { upsert: true });
      const seen = await reader.collection('samples').count();
      expect(seen).toBeGreaterThan(0);
      expect(seen).toBeLessThan(n);
    } finally {
      // The writer first: its last window holds the write lock the reader's closing optimize needs.
      await writer.close();
      await reader.close();
    }
  });

  it('undoes only the failed write of a window', async () => {
    const store = SqliteReadStore.open(path.join(dir, 'read-models.sqlite'), { groupCommitMs: 60_000 });
    try {
      const samples = store.collection('samples');
      await samples.updateOne({ _id: 's1' }, { $set: { label: 'cat' } }, { upsert: true });
      await expect(store.commit([{ kind: 'put', collection: 'samples', doc: { _id: 's2' } }, { kind: 'put', collection: 'samples', doc: { _id: 's3', n: 1n } as unknown as Document }], [{ name: 'samples', position: 9n }])).rejects.toThrow();
      await samples.updateOne({ _id: 's4' }, { $set: { label: 'dog' } }, { upsert: true });
      store.commitGroup();
      expect((await samples.find({}, { sort: { _id: 1 } })).map((d) => d._id)).toEqual(['s1', 's4']);
      expect(await store.getCheckpoint('samples')).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('commits the open window when it closes', async () => {
    const file = path.join(dir, 'read-models.sqlite');
    const store = SqliteReadStore.open(file, { groupCommitMs: 60_000 });
    await store.setCheckpoint('samples', 4n);
    await store.close();
    const again = SqliteReadStore.open(file);
    try {
      expect(await again.getCheckpoint('samples')).toBe(4n);
    } finally {
      await again.close();
    }
  });

  it('commits by itself when the window ends', async () => {
    const file = path.join(dir, 'read-models.sqlite');
    const writer = SqliteReadStore.open(file, { groupCommitMs: 20 });
    const reader = SqliteReadStore.open(file);
    try {
      await writer.setCheckpoint('samples', 5n);
      await vi.waitFor(async () => expect(await reader.getCheckpoint('samples')).toBe(5n), { timeout: 2000, interval: 10 });
    } finally {
      await reader.close();
      await writer.close();
    }
  });
});
