import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

const WITHIN = { timeout: 10_000 };
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { truncateWal } from '../../stores/sqliteErasure';
import { BACKSTOP_CHECKPOINT_PAGES, START_AFTER_COMMITS, WalCheckpoints, WRITER_CHECKPOINT_PAGES } from '../../stores/walCheckpoints';
import { newEvent } from './eventStore.contract';

const dir = mkdtempSync(join(tmpdir(), 'wal-checkpoints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function walDatabase(name: string): Database.Database {
  const db = new Database(join(dir, name));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE IF NOT EXISTS t (x)');
  return db;
}

const writerBound = (db: Database.Database): number => db.pragma('wal_autocheckpoint', { simple: true }) as number;

describe('the log checkpointed on a thread of its own', () => {
  it('copies a busy log into its file from the thread, the writer checkpointing only far behind it', async () => {
    const file = join(dir, 'log.sqlite');
    const store = SqliteEventStore.open(file);
    try {
      const commits = START_AFTER_COMMITS + 36;
      // One append a turn: each is a commit of its own.
      for (let i = 0; i < commits; i++) await store.appendToStream(`sample-${i}`, [newEvent('SampleIngested', { i, pad: 'x'.repeat(2000) })], 'no_stream');
      expect(store.checkpoints?.running).toBe(true);
      await expect.poll(() => store.checkpoints?.checkpointsMade ?? 0, WITHIN).toBeGreaterThan(0);
      // The file alone (no WAL beside it) holds what the thread copied, synced.
      const copy = join(dir, 'copy.sqlite');
      copyFileSync(file, copy);
      const alone = new Database(copy, { readonly: true });
      try {
        const { n } = alone.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number };
        expect(n).toBeGreaterThan(0);
        expect(n).toBeLessThanOrEqual(commits);
      } finally {
        alone.close();
      }
    } finally {
      await store.close();
    }
    expect(store.checkpoints?.running).toBe(false);
    expect(store.checkpoints?.failure).toBeUndefined();
    // Closed whole: the reopened log has every event.
    const reopened = SqliteEventStore.open(file);
    try {
      let count = 0;
      for await (const _ of reopened.readAll()) count++;
      expect(count).toBe(START_AFTER_COMMITS + 36);
    } finally {
      await reopened.close();
    }
  });

  it('leaves a store with few commits, and one in memory, without a thread', async () => {
    const store = SqliteEventStore.open(join(dir, 'quiet.sqlite'));
    const memory = SqliteEventStore.open(':memory:');
    try {
      for (let i = 0; i < 5; i++) await store.appendToStream(`s-${i}`, [newEvent('E', { i })], 'no_stream');
      expect(store.checkpoints?.running).toBe(false);
      expect(memory.checkpoints).toBeUndefined();
    } finally {
      await Promise.all([store.close(), memory.close()]);
    }
  });

  it('raises the writer’s bound while the thread runs, and lowers it again once stopped', async () => {
    const db = walDatabase('bound.sqlite');
    const checkpoints = new WalCheckpoints(db, join(dir, 'bound.sqlite'), { startAfterCommits: 2, intervalMs: 20 });
    try {
      checkpoints.committed();
      expect(checkpoints.running).toBe(false);
      expect(writerBound(db)).toBe(WRITER_CHECKPOINT_PAGES);
      checkpoints.committed();
      expect(checkpoints.running).toBe(true);
      expect(writerBound(db)).toBe(BACKSTOP_CHECKPOINT_PAGES);
      for (let i = 0; i < 50; i++) db.prepare('INSERT INTO t VALUES (?)').run(i);
      await expect.poll(() => checkpoints.checkpointsMade, WITHIN).toBeGreaterThan(0);
      // Idle, the thread looks again every 20 ms and finds nothing new to copy: none is counted.
      const made = checkpoints.checkpointsMade;
      await new Promise((r) => setTimeout(r, 200));
      expect(checkpoints.checkpointsMade).toBe(made);
      await checkpoints.stop();
      expect(checkpoints.running).toBe(false);
      expect(checkpoints.failure).toBeUndefined();
      expect(writerBound(db)).toBe(WRITER_CHECKPOINT_PAGES);
      // Stopped for good: later commits start nothing.
      for (let i = 0; i < 5; i++) checkpoints.committed();
      expect(checkpoints.running).toBe(false);
    } finally {
      db.close();
    }
  });

  it('lets an erasure truncate the WAL while the thread checkpoints', async () => {
    const db = walDatabase('erasure.sqlite');
    const checkpoints = new WalCheckpoints(db, join(dir, 'erasure.sqlite'), { startAfterCommits: 1, intervalMs: 1 });
    try {
      checkpoints.committed();
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      for (let round = 0; round < 20; round++) {
        for (let i = 0; i < 20; i++) insert.run('x'.repeat(3000));
        await new Promise((r) => setTimeout(r, 2));
      }
      await expect.poll(() => checkpoints.checkpointsMade, WITHIN).toBeGreaterThan(0);
      for (let i = 0; i < 20; i++) insert.run('y'.repeat(3000));
      expect(await truncateWal(db)).toBe(true);
      expect(statSync(join(dir, 'erasure.sqlite-wal')).size).toBe(0);
      expect(checkpoints.running).toBe(true);
    } finally {
      await checkpoints.stop();
      db.close();
    }
  });

  it('gives the checkpoints back to the writer when the thread cannot open the file', async () => {
    const db = walDatabase('writer.sqlite');
    const told: Error[] = [];
    const checkpoints = new WalCheckpoints(db, join(dir, 'no-such-folder', 'log.sqlite'), { startAfterCommits: 1, onFailure: (e) => told.push(e) });
    try {
      checkpoints.committed();
      await expect.poll(() => checkpoints.running, WITHIN).toBe(false);
      expect(checkpoints.failure?.message).toMatch(/unable to open|directory does not exist|SQLITE_CANTOPEN/i);
      expect(told).toEqual([checkpoints.failure]);
      expect(writerBound(db)).toBe(WRITER_CHECKPOINT_PAGES);
    } finally {
      await checkpoints.stop();
      db.close();
    }
  });
});
