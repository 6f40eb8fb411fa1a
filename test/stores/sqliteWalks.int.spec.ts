// Walks apart run on connections of their own, at most four at once: a walk that fails before it
// starts (its group commit, or opening its connection) must give its turn back.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { Page, WalksApart } from '../../stores/readstore/sqlite/walks';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('walks apart', () => {
  it('give their turn back when the commit before them fails, so later walks still run', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'walks-'));
    dirs.push(dir);
    const file = path.join(dir, 'rows.sqlite');
    const db = new Database(file);
    db.exec("CREATE TABLE t (seq INTEGER PRIMARY KEY, doc TEXT); INSERT INTO t (doc) VALUES ('{\"_id\":1}'), ('{\"_id\":2}')");
    db.close();
    let failing = true;
    const walks = new WalksApart({
      file,
      busyTimeoutMs: 1000,
      scanSliceMs: 10,
      commitGroup: () => {
        if (failing) throw new Error('disk full');
      },
    });
    const walk = { sql: 'SELECT seq, doc FROM t ORDER BY seq', params: [] };
    for (let i = 0; i < 6; i++) await expect(walks.run(walk, new Page(() => true, undefined, undefined, false))).rejects.toThrow('disk full');
    failing = false;
    const page = new Page(() => true, undefined, undefined, false);
    // Before the fix, the four turns the failures took were never given back: this walk waited forever.
    await walks.run(walk, page);
    expect(page.found.map((f) => f.doc)).toEqual([{ _id: 1 }, { _id: 2 }]);
  }, 10_000);
});
