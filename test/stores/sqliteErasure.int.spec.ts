// What the SQLite stores delete leaves no copy in their files: not in a free page, not in the
// write-ahead log. Each test keeps a value that was not deleted, found by the same scan.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteBlobStore } from '../../stores/blobstore/sqliteBlobStore';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { SqliteKeyStore } from '../../stores/keystore/sqliteKeyStore';
import { SqliteReadStore } from '../../stores/readstore/sqliteReadStore';
import { truncateWal } from '../../stores/sqliteErasure';
import { findInFolder } from '../support/bytesScan';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sqlite-erasure-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('erasing in the SQLite stores', () => {
  it('a destroyed key is in neither keys.sqlite nor its write-ahead log; a kept one is', async () => {
    const keys = SqliteKeyStore.open(join(dir, 'keys.sqlite'));
    const gone = await keys.getOrCreate('user-1');
    const kept = await keys.getOrCreate('user-2');
    await keys.destroy('user-1');
    expect(await findInFolder(dir, { gone, kept })).toEqual(['kept in keys.sqlite']);
    await keys.close();
    expect(await findInFolder(dir, { gone, kept })).toEqual(['kept in keys.sqlite']);
  });

  it('a deleted small blob (a photo) is in neither blobs.sqlite nor its write-ahead log', async () => {
    const blobs = SqliteBlobStore.open(join(dir, 'blobs.sqlite'));
    const photo = Buffer.concat([Buffer.from('photo-marker-0b5e'), randomBytes(6000)]);
    const sample = Buffer.from('sample-marker-91d2 that stays');
    const { sha256 } = await blobs.put(photo);
    await blobs.put(sample);
    expect(await blobs.delete(sha256)).toBe(true);
    expect(await findInFolder(dir, { photo: 'photo-marker-0b5e', sample: 'sample-marker-91d2' })).toEqual(['sample in blobs.sqlite']);
    await blobs.close();
    expect(await findInFolder(dir, { photo: 'photo-marker-0b5e', sample: 'sample-marker-91d2' })).toEqual(['sample in blobs.sqlite']);
  });

  it("a deleted small blob kept in the log's file is in neither events.sqlite nor its write-ahead log", async () => {
    const log = SqliteEventStore.open(join(dir, 'events.sqlite'));
    const blobs = SqliteBlobStore.inLogFile(log.tables());
    const photo = Buffer.concat([Buffer.from('photo-marker-5d1a'), randomBytes(6000)]);
    const sample = Buffer.from('sample-marker-e3c7 that stays');
    const { sha256 } = await blobs.put(photo);
    await blobs.put(sample);
    await log.appendToStream('sample-1', [{ id: randomUUID(), type: 'Stored', data: { sha: sha256 }, metadata: { actor: 't', correlationId: 'c', time: new Date().toISOString() } }], 'no_stream');
    expect(await blobs.delete(sha256)).toBe(true);
    const markers = { photo: 'photo-marker-5d1a', sample: 'sample-marker-e3c7' };
    expect(await findInFolder(dir, markers)).toEqual(['sample in events.sqlite']);
    await blobs.close();
    await log.close();
    expect(await findInFolder(dir, markers)).toEqual(['sample in events.sqlite']);
  });

  it('a read model document deleted, and the versions it replaced, are gone once the store is scrubbed', async () => {
    const store = SqliteReadStore.open(join(dir, 'read-models.sqlite'), { groupCommitMs: 20, indexes: { users: [{ keys: { emailLower: 1 } }] } });
    const users = store.collection('users');
    // Long enough to spill into overflow pages, which a delete frees whole.
    const bio = 'x'.repeat(9000);
    await users.updateOne({ _id: 1 }, { $set: { emailLower: 'gone.4c1d@example.org', jobTitle: 'First title 4c1d', bio } }, { upsert: true });
    await users.updateOne({ _id: 2 }, { $set: { emailLower: 'kept.77aa@example.org' } }, { upsert: true });
    store.commitGroup();
    await users.updateOne({ _id: 1 }, { $set: { jobTitle: 'Second title 4c1d' } });
    store.commitGroup();
    await users.deleteOne({ _id: 1 });
    // Still in the open group: the scrub commits it first.
    expect(await store.scrubDeleted()).toBe(true);
    const values = { email: 'gone.4c1d@example.org', first: 'First title 4c1d', second: 'Second title 4c1d', kept: 'kept.77aa@example.org' };
    expect(await findInFolder(dir, values)).toEqual(['kept in read-models.sqlite']);
    await store.close();
    expect(await findInFolder(dir, values)).toEqual(['kept in read-models.sqlite']);
  });

  it('truncating the write-ahead log waits for a reader on an earlier snapshot, and answers false if it never ends', async () => {
    const file = join(dir, 'wal.sqlite');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v TEXT)');
    db.prepare('INSERT INTO t VALUES (?)').run('secret-5e0f');
    const reader = new Database(file);
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM t').get();
    db.prepare('DELETE FROM t').run();
    expect(await truncateWal(db, undefined, 30)).toBe(false);
    const truncated = truncateWal(db);
    setTimeout(() => reader.exec('COMMIT'), 50);
    expect(await truncated).toBe(true);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
    reader.close();
    db.close();
  });
});
