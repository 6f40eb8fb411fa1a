// The SQLite read store groups writes into one commit per 20 ms window, committed from a timer.
// On a full disk that COMMIT failed in the timer and the exception ended the process (losing the
// uploads in flight). Now the window is rolled back, the projections go back to the checkpoints
// that are durable, retry with backoff, and catch up once space is freed, without a restart.
// On a real full disk: a small tmpfs, filled.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { defineProjection } from '../../projections/projection';
import { ProjectionRunner } from '../../projections/projectionRunner';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { SqliteReadStore } from '../../stores/readstore/sqliteReadStore';
import { fill, smallDisk, unmount } from '../support/smallDisk';



type NoteWritten = { type: 'NoteWritten'; data: { id: number; text: string } };
const notes = defineProjection<NoteWritten>('notes', ['notes'], {
  NoteWritten: async (event, store) => {
    await store.collection('notes').updateOne({ _id: event.data.id }, { $set: { text: event.data.text } }, { upsert: true });
  },
});

const mounted = await smallDisk('8m');
const skipReason = 'skip' in mounted ? mounted.skip : undefined;

describe.skipIf(skipReason !== undefined)(`projections into SQLite read models on a disk that fills up${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  const dir = 'dir' in mounted ? mounted.dir : '';
  const filler = path.join(dir, 'filler');
  const opened: { close(): Promise<void> }[] = [];
  let logDir: string | undefined;
  afterAll(async () => {
    if (dir) rmSync(filler, { force: true });
    for (const store of opened.reverse()) await store.close().catch(() => undefined);
    if (logDir) await rm(logDir, { recursive: true, force: true });
    if (dir) await unmount(dir);
  });

  it('survives a group commit that fails in its timer, and catches up once space is freed', async () => {
    // The log on the ordinary disk: only the read models' disk fills.
    logDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-full-read-store-log-'));
    const events = SqliteEventStore.open(path.join(logDir, 'events.sqlite'));
    opened.push(events);
    const readStore = SqliteReadStore.open(path.join(dir, 'read-models.sqlite'), { groupCommitMs: 20 });
    opened.push(readStore);
    const runner = new ProjectionRunner(events, readStore, [notes], pino({ level: 'silent' }), 50, 400);
    opened.push({ close: () => runner.stop() });
    const write = async (id: number, bytes: number) => {
      const { position } = await events.appendToStream(`note-${id}`, [{ id: randomUUID(), type: 'NoteWritten', data: { id, text: String(id).padEnd(bytes, '.') }, metadata: { actor: 'system:test', correlationId: 'c', time: new Date().toISOString() } }], 'any');
      return position;
    };
    await write(0, 1000);
    await runner.start();

    fill(filler);
    let head = 0n;
    // Each batch commits at the window's end, from the timer: more than the disk has left, less than SQLite's page cache.
    for (let id = 1; id <= 40; id++) head = await write(id, 30_000);
    // What is durable is what another connection reads from the file.
    const durable = () => SqliteReadStore.checkpointsIn(path.join(dir, 'read-models.sqlite'), ['notes']).get('notes')?.position;
    // Past many windows and retries (the test's own process would have ended at the first).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(durable()).toBeLessThan(head);

    rmSync(filler);
    await expect.poll(durable, { timeout: 30_000, interval: 100 }).toBe(head);
    expect(await runner.waitFor(head, 1000)).toBe(true);
    expect(await readStore.collection('notes').count({})).toBe(41);
    expect(await runner.failures()).toEqual([]);
  }, 60_000);
});
