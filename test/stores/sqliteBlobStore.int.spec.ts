// The SQLite small-blob store and the embedded default's tiered store hold to the blob store
// contract; the tiered store puts small content in SQLite and large content in files.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileBlobStore } from '../../stores/blobstore/fileBlobStore';
import { SqliteBlobStore } from '../../stores/blobstore/sqliteBlobStore';
import { TieredBlobStore } from '../../stores/blobstore/tieredBlobStore';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { blobStoreContract } from './blobStore.contract';

let dir: string;
let n = 0;
const fresh = () => join(dir, `blobs-${n++}`);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sqlite-blob-store-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

blobStoreContract('SqliteBlobStore', async () => SqliteBlobStore.open(`${fresh()}.sqlite`));
// The embedded default's small tier: the tables in the log's file, the puts in its group commits.
blobStoreContract('SqliteBlobStore in the log file', async () => {
  const log = SqliteEventStore.open(`${fresh()}.sqlite`);
  const store = SqliteBlobStore.inLogFile(log.tables());
  // The contract closes the blob store; the log owns the connection and goes after it.
  const close = store.close.bind(store);
  return Object.assign(store, { close: async () => (await close(), await log.close()) });
});
// A small threshold, so the contract's contents exercise both tiers.
blobStoreContract('TieredBlobStore', async () => {
  const base = fresh();
  return new TieredBlobStore(SqliteBlobStore.open(`${base}.sqlite`), await FileBlobStore.open(base), 64);
});

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('TieredBlobStore', () => {
  it('keeps small content in SQLite and large content as files, and reads and deletes both', async () => {
    const base = fresh();
    const files = await FileBlobStore.open(base);
    const store = new TieredBlobStore(SqliteBlobStore.open(`${base}.sqlite`), files, 1024);
    const small = randomBytes(1000);
    const large = randomBytes(5000);
    await store.put(small);
    await store.put(large);
    expect(existsSync(join(base, sha(small).slice(0, 2), sha(small)))).toBe(false);
    expect(existsSync(join(base, sha(large).slice(0, 2), sha(large)))).toBe(true);
    // An upload received to disk: small ones go to SQLite and the file is gone either way.
    const received = join(dir, 'received.part');
    const smallFile = randomBytes(500);
    await writeFile(received, smallFile);
    await store.putFile(received, { sha256: sha(smallFile), size: smallFile.length });
    expect(existsSync(received)).toBe(false);
    expect(existsSync(join(base, sha(smallFile).slice(0, 2), sha(smallFile)))).toBe(false);
    for (const content of [small, large, smallFile]) {
      const chunks: Buffer[] = [];
      for await (const chunk of await store.open(sha(content))) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks)).toEqual(content);
    }
    // Content put once as a stream (a file) and once as bytes (SQLite) is one blob to its users.
    await store.put(Readable.from([small]));
    expect(await store.stat(sha(small))).toEqual({ sha256: sha(small), size: 1000 });
    expect(await store.delete(sha(small))).toBe(true);
    expect(await store.stat(sha(small))).toBeUndefined();
    await store.close();
  });

  it('commits the puts made at once together, each durable when it resolves', async () => {
    const file = `${fresh()}.sqlite`;
    const store = SqliteBlobStore.open(file);
    const contents = Array.from({ length: 40 }, () => randomBytes(300));
    await Promise.all(contents.map((c) => store.put(c)));
    await store.close();
    const reopened = SqliteBlobStore.open(file);
    for (const c of contents) expect(await reopened.stat(sha(c))).toEqual({ sha256: sha(c), size: 300 });
    await reopened.close();
  });
});

describe('SqliteBlobStore on a file of the layout before (rows keyed by their SHA-256, WITHOUT ROWID)', () => {
  const oldLayout = async (file: string, blobs: Uint8Array[], quarantined: Uint8Array[]) => {
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec(`
      CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL, data BLOB NOT NULL) WITHOUT ROWID;
      CREATE TABLE quarantine (sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL, data BLOB NOT NULL) WITHOUT ROWID;
    `);
    for (const [table, contents] of [['blobs', blobs], ['quarantine', quarantined]] as const) {
      for (const bytes of contents) db.prepare(`INSERT INTO ${table} (sha256, size, data) VALUES (?, ?, ?)`).run(sha(bytes), bytes.byteLength, bytes);
    }
    db.close();
  };
  const tables = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as { name: string; sql: string }[];
    } finally {
      db.close();
    }
  };

  it('lays it out anew once, at the first open, and keeps every blob, quarantined ones too', async () => {
    const file = `${fresh()}.sqlite`;
    const blobs = Array.from({ length: 300 }, (_, i) => randomBytes(100 + i * 7));
    const quarantined = [randomBytes(50)];
    await oldLayout(file, blobs, quarantined);
    let relayouts = 0;
    const store = SqliteBlobStore.open(file, { onRelayout: () => relayouts++ });
    try {
      expect(relayouts).toBe(1);
      // The copy's write-ahead log (every blob) was given back, the store still open.
      expect(statSync(`${file}-wal`).size).toBe(0);
      for (const bytes of blobs) {
        expect(await store.stat(sha(bytes))).toEqual({ sha256: sha(bytes), size: bytes.byteLength });
        expect(Buffer.concat(await (await store.open(sha(bytes))).toArray())).toEqual(Buffer.from(bytes));
      }
      expect(store.has(sha(quarantined[0]!))).toBe(false);
      await store.restore(sha(quarantined[0]!));
      expect(store.has(sha(quarantined[0]!))).toBe(true);
      // New content goes after the copied rows, and content put again is stored once.
      const fresh1 = randomBytes(400);
      expect(await store.put(fresh1)).toEqual({ sha256: sha(fresh1), size: 400 });
      expect(await store.put(blobs[0]!)).toEqual({ sha256: sha(blobs[0]!), size: blobs[0]!.byteLength });
    } finally {
      await store.close();
    }
    const laidOut = tables(file);
    expect(laidOut.map((t) => t.name)).toEqual(['blobs', 'quarantine']);
    for (const t of laidOut) expect(t.sql).not.toMatch(/WITHOUT ROWID/);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) FROM blobs').pluck().get()).toBe(302);
    } finally {
      db.close();
    }
    const again = SqliteBlobStore.open(file, { onRelayout: () => relayouts++ });
    await again.close();
    expect(relayouts).toBe(1);
  });
});

describe('SqliteBlobStore in the log file', () => {
  const newEvent = (type: string) => ({ id: randomUUID(), type, data: { at: type }, metadata: { time: new Date().toISOString(), actor: 'test', correlationId: 'c' } });

  it("shares the log's commit: a turn's puts and appends are one transaction, each durable when it resolves", async () => {
    const file = `${fresh()}.sqlite`;
    const log = SqliteEventStore.open(file);
    const store = SqliteBlobStore.inLogFile(log.tables());
    const walFrames = () => statSync(`${file}-wal`).size;
    const contents = Array.from({ length: 20 }, () => randomBytes(300));
    // Warm the file up (its first pages), so the next commit's size is its own.
    await Promise.all([store.put(randomBytes(10)), log.appendToStream('warm-1', [newEvent('Warm')], 'no_stream')]);
    const before = walFrames();
    const [, ...appended] = await Promise.all([
      Promise.all(contents.map((c) => store.put(c))),
      ...contents.map((_, i) => log.appendToStream(`s-${i}`, [newEvent('Put')], 'no_stream')),
    ]);
    expect(appended).toHaveLength(20);
    // SQLite's write-ahead log: a commit writes each page it changed once; two commits (one for the
    // blobs, one for the events) would write the pages both touch (the schema's root, the file's
    // header page) twice. Read from the frames: every frame whose commit-size field is set ends a commit.
    const wal = await readFile(`${file}-wal`);
    const pageSize = wal.readUInt32BE(8);
    let commitFrames = 0;
    for (let at = 32 + Math.floor((before - 32) / (24 + pageSize)) * (24 + pageSize); at + 24 <= wal.length; at += 24 + pageSize) {
      if (wal.readUInt32BE(at + 4) !== 0) commitFrames++;
    }
    expect(commitFrames).toBe(1);
    await store.close();
    await log.close();
    // Durable: reopened, every blob and event is there.
    const reopened = SqliteEventStore.open(file);
    const again = SqliteBlobStore.inLogFile(reopened.tables());
    for (const c of contents) expect(await again.stat(sha(c))).toEqual({ sha256: sha(c), size: 300 });
    expect((await reopened.readStream('s-19')).map((e) => e.type)).toEqual(['Put']);
    await again.close();
    await reopened.close();
  });

  it("a put whose commit fails fails the appends of that commit, and stores none of them", async () => {
    const file = `${fresh()}.sqlite`;
    const log = SqliteEventStore.open(file);
    const tables = log.tables();
    const store = SqliteBlobStore.inLogFile(tables);
    const blob = randomBytes(100);
    // A statement the log's file refuses stands for a write the disk refuses.
    const failing = tables.commitWith({ sql: 'INSERT INTO no_such_table VALUES (1)', params: [] });
    const results = await Promise.allSettled([failing, store.put(blob), log.appendToStream('doomed', [newEvent('Doomed')], 'no_stream')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(store.has(sha(blob))).toBe(false);
    expect(await log.readStream('doomed')).toEqual([]);
    // The next turn commits as before.
    await log.appendToStream('after', [newEvent('After')], 'no_stream');
    expect(await store.put(blob)).toEqual({ sha256: sha(blob), size: 100 });
    await store.close();
    await log.close();
  });

  it('leaves the connection to the log: closed, the log still appends and its blobs are read', async () => {
    const file = `${fresh()}.sqlite`;
    const log = SqliteEventStore.open(file);
    const store = SqliteBlobStore.inLogFile(log.tables());
    const blob = randomBytes(64);
    await store.put(blob);
    await store.close();
    await expect(store.put(randomBytes(8))).rejects.toThrow(/closed/);
    await log.appendToStream('still', [newEvent('Still')], 'no_stream');
    expect(SqliteBlobStore.inLogFile(log.tables()).has(sha(blob))).toBe(true);
    await log.close();
    await expect(log.tables().commitWith({ sql: 'SELECT 1', params: [] })).rejects.toThrow(/closed/);
  });
});

describe('TieredBlobStore with the small blobs of the layout before (their own file)', () => {
  it('reads, sets aside and deletes what the earlier file holds, and puts nothing there', async () => {
    const base = fresh();
    const earlierFile = `${base}-earlier.sqlite`;
    const old = SqliteBlobStore.open(earlierFile);
    const kept = randomBytes(200);
    const gone = randomBytes(300);
    await old.put(kept);
    await old.put(gone);
    await old.close();
    const log = SqliteEventStore.open(`${base}-events.sqlite`);
    const earlier = SqliteBlobStore.open(earlierFile);
    const store = new TieredBlobStore(SqliteBlobStore.inLogFile(log.tables()), await FileBlobStore.open(base), 1024, earlier);
    try {
      expect(await store.stat(sha(kept))).toEqual({ sha256: sha(kept), size: 200 });
      expect(Buffer.concat(await (await store.open(sha(kept))).toArray())).toEqual(kept);
      expect(await store.quarantine(sha(kept))).toBe(true);
      expect(await store.stat(sha(kept))).toBeUndefined();
      await store.restore(sha(kept));
      expect(await store.stat(sha(kept))).toEqual({ sha256: sha(kept), size: 200 });
      expect(await store.delete(sha(gone))).toBe(true);
      expect(earlier.has(sha(gone))).toBe(false);
      const fresh1 = randomBytes(100);
      await store.put(fresh1);
      expect(earlier.has(sha(fresh1))).toBe(false);
      expect(await store.stat(sha(fresh1))).toEqual({ sha256: sha(fresh1), size: 100 });
    } finally {
      await store.close();
      await log.close();
    }
  });
});
