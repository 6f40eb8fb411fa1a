// A group of writes whose commit fails in the group-commit timer (a damaged file,
// a failing disk) must not be an uncaught exception that stops the process: it is reported with the
// file's name, the group is rolled back, and every later write is refused with the same error.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReadModelsWriteError, SqliteReadStore } from '../../stores/readstore/sqliteReadStore';

describe('a group commit that fails in its timer', () => {
  const folders: string[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const f of folders.splice(0)) await rm(f, { recursive: true, force: true });
  });

  it('is reported naming the file, rolls the group back, and refuses later writes instead of stopping the process', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-commit-failure-'));
    folders.push(dir);
    const file = path.join(dir, 'read-models.sqlite');
    const reported: Error[] = [];
    const store = SqliteReadStore.open(file, { groupCommitMs: 5, onCommitFailure: (error) => reported.push(error) });
    const db = (store as unknown as { db: Database.Database }).db;
    const exec = db.exec.bind(db);
    vi.spyOn(db, 'exec').mockImplementation((sql: string) => {
      if (sql === 'COMMIT') throw Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' });
      return exec(sql);
    });
    await store.collection('things').updateOne({ _id: 'a' }, { $set: { n: 1 } }, { upsert: true });
    await vi.waitFor(() => expect(reported).toHaveLength(1), { timeout: 2000 });
    expect(reported[0]).toBeInstanceOf(ReadModelsWriteError);
    expect(reported[0]!.message).toContain(file);
    expect(reported[0]!.message).toContain('database disk image is malformed');
    await expect(store.collection('things').updateOne({ _id: 'b' }, { $set: { n: 2 } }, { upsert: true })).rejects.toBeInstanceOf(ReadModelsWriteError);
    vi.restoreAllMocks();
    await store.close().catch(() => {});
    const reopened = SqliteReadStore.open(file);
    try {
      expect(await reopened.collection('things').count({})).toBe(0);
    } finally {
      await reopened.close();
    }
  });
});
