import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordLogCheckpoint, startLogCheckpoints } from '../../commands/audit/logCheckpointer';
import pino from 'pino';
import { verifyLog } from '../../commands/audit/verifyLog';
import { AUDIT_LOG_STREAM } from '../../domain/audit/auditEvents';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { newEvent } from '../stores/eventStore.contract';

// The log verifier against the embedded store's file, altered underneath it as someone with the
// file would: any changed byte, a removed, moved or reordered event must be found and named.

const folder = mkdtempSync(path.join(tmpdir(), 'verify-log-'));
let fileCount = 0;
const freshFile = () => path.join(folder, `log-${fileCount++}.sqlite`);

/** A small log of several streams with a checkpoint in the middle and one at the end. */
async function scriptedLog(file: string): Promise<void> {
  const store = SqliteEventStore.open(file);
  try {
    await store.appendToStream('project-1', [newEvent('ProjectCreated', { name: 'Ünïcode "quoted"', n: 1.5 }), newEvent('ProjectUpdated', { readme: 'a\nb' })], 'no_stream');
    await store.appendToStream('user-7', [newEvent('UserRegistered', { email: 'sealed:v1:abc', tags: [1, 2, 3] })], 'no_stream');
    await store.appendToStream('project-1', [newEvent('SampleLabelled', { label: 'x' })], 1n);
    expect(await recordLogCheckpoint(store)).toBeDefined();
    for (let i = 0; i < 6; i++) await store.appendToStream(`sample-${i % 3}`, [newEvent('SampleIngested', { i, values: [i, -i, 0.1 * i] })], 'any');
    await store.appendToStream('user-7', [newEvent('UserDeleted', {})], 0n);
    expect(await recordLogCheckpoint(store)).toBeDefined();
  } finally {
    await store.close();
  }
}

async function verifyFile(file: string) {
  const store = SqliteEventStore.open(file);
  try {
    return await verifyLog(store);
  } finally {
    await store.close();
  }
}

/** Opens the file as raw SQLite, runs the change, and closes it (the WAL folded back in). */
function tamper(file: string, change: (db: Database.Database) => void): void {
  const db = new Database(file);
  try {
    db.defaultSafeIntegers(true);
    change(db);
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

const TEXT_COLUMNS = ['stream_id', 'event_id', 'type', 'data', 'metadata', 'hash'] as const;

describe('verifying the log', () => {
  let pristine: string;
  let rows: { position: bigint; stream_id: string }[];

  beforeAll(async () => {
    pristine = freshFile();
    await scriptedLog(pristine);
    tamper(pristine, (db) => {
      rows = db.prepare<[], { position: bigint; stream_id: string }>('SELECT position, stream_id FROM events ORDER BY position').all();
    });
  });

  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('passes an untouched log, matching every checkpoint', async () => {
    const report = await verifyFile(pristine);
    expect(report.problem).toBeUndefined();
    expect(report.events).toBe(rows.length);
    expect(report.checkpointsMatched).toBe(2);
    expect(report.streams).toBe(6);
    expect(report.logHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('finds any single changed character in any stored text of any event', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        fc.constantFrom(...TEXT_COLUMNS),
        fc.nat(),
        fc.integer({ min: 1, max: 0xffff }),
        async (rowPick, column, at, code) => {
          const row = rows[rowPick % rows.length]!;
          const file = freshFile();
          copyFileSync(pristine, file);
          let changed = false;
          tamper(file, (db) => {
            const { value } = db.prepare<[bigint], { value: string }>(`SELECT ${column} AS value FROM events WHERE position = ?`).get(row.position)!;
            const index = at % value.length;
            const replacement = String.fromCharCode(code >= 0xd800 && code <= 0xdfff ? 0x41 : code);
            if (value[index] === replacement) return;
            const altered = value.slice(0, index) + replacement + value.slice(index + 1);
            try {
              db.prepare(`UPDATE events SET ${column} = ? WHERE position = ?`).run(altered, row.position);
              changed = true;
            } catch (error) {
              // A changed event id that collides with another's: the constraint stops it first.
              if (!(error instanceof Database.SqliteError && error.code === 'SQLITE_CONSTRAINT_UNIQUE')) throw error;
            }
          });
          fc.pre(changed);
          const report = await verifyFile(file);
          expect(report.problem, `${column} of position ${row.position}`).toBeDefined();
          // Named at the altered event, or at the next one whose chain it breaks.
          expect(report.problem!.position >= row.position || report.problem!.kind === 'checkpoint').toBe(true);
          rmSync(file);
        },
      ),
      { numRuns: 120 },
    );
  });

  it('names an event removed from the middle of its stream as missing', async () => {
    const file = freshFile();
    copyFileSync(pristine, file);
    tamper(file, (db) => db.prepare("DELETE FROM events WHERE stream_id = 'project-1' AND revision = 1").run());
    const report = await verifyFile(file);
    expect(report.problem).toMatchObject({ kind: 'missing', streamId: 'project-1', revision: 2n });
    expect(report.problem!.detail).toContain('revision 1 is missing');
  });

  it('finds the last event of a stream removed, through the checkpoint that covered it', async () => {
    const file = freshFile();
    copyFileSync(pristine, file);
    const { position } = rows.find((r) => r.stream_id === 'user-7' && r !== rows.find((f) => f.stream_id === 'user-7'))!;
    tamper(file, (db) => db.prepare("DELETE FROM events WHERE stream_id = 'user-7' AND revision = 1").run());
    const report = await verifyFile(file);
    expect(report.problem).toMatchObject({ kind: 'missing', streamId: AUDIT_LOG_STREAM, revision: 1n, position });
  });

  it('finds an event removed from the middle of the log, through the checkpoint after it', async () => {
    const file = freshFile();
    copyFileSync(pristine, file);
    tamper(file, (db) => db.prepare("DELETE FROM events WHERE stream_id = 'sample-1' AND revision = 1").run());
    const report = await verifyFile(file);
    expect(report.problem?.kind).toBe('checkpoint');
    expect(report.problem?.streamId).not.toBe('sample-1');
  });

  it('finds a lost tail of the log that a checkpoint covered', async () => {
    const file = freshFile();
    copyFileSync(pristine, file);
    // Everything after the first checkpoint's coverage, except that checkpoint itself, is gone.
    tamper(file, (db) => {
      const first = db.prepare<[], { data: string; position: bigint }>(`SELECT data, position FROM events WHERE stream_id = '${AUDIT_LOG_STREAM}' ORDER BY revision LIMIT 1`).get()!;
      const through = BigInt((JSON.parse(first.data) as { throughPosition: string }).throughPosition);
      db.prepare(`DELETE FROM events WHERE position > ? AND stream_id <> '${AUDIT_LOG_STREAM}'`).run(through);
      db.prepare(`DELETE FROM events WHERE stream_id = '${AUDIT_LOG_STREAM}' AND revision > 0`).run();
      db.prepare(`DELETE FROM events WHERE position > ? AND position < ?`).run(through, first.position);
    });
    const intact = await verifyFile(file);
    // What is left is a consistent prefix: nothing recorded says more was there.
    expect(intact.problem).toBeUndefined();

    const truncated = freshFile();
    copyFileSync(pristine, truncated);
    tamper(truncated, (db) => db.prepare(`DELETE FROM events WHERE position = (SELECT MAX(position) FROM events WHERE stream_id <> '${AUDIT_LOG_STREAM}')`).run());
    expect((await verifyFile(truncated)).problem).toMatchObject({ kind: 'missing', streamId: AUDIT_LOG_STREAM });

    // A tail cut with the checkpoints that covered it leaves a consistent log: only the log hash
    // recorded elsewhere (the verifier prints it) shows the difference.
    const cut = freshFile();
    copyFileSync(pristine, cut);
    tamper(cut, (db) => db.prepare(`DELETE FROM events WHERE position >= (SELECT MAX(position) FROM events WHERE stream_id <> '${AUDIT_LOG_STREAM}')`).run());
    const report = await verifyFile(cut);
    expect(report.problem).toBeUndefined();
    expect(report.logHash).not.toBe((await verifyFile(pristine)).logHash);
  });

  it('names two events of a stream swapped in the log as reordered', async () => {
    const file = freshFile();
    copyFileSync(pristine, file);
    tamper(file, (db) => {
      const [a, b] = db.prepare<[], { position: bigint }>("SELECT position FROM events WHERE stream_id = 'project-1' AND revision IN (0, 1) ORDER BY revision").all();
      db.prepare('UPDATE events SET position = -1 WHERE position = ?').run(a!.position);
      db.prepare('UPDATE events SET position = ? WHERE position = ?').run(a!.position, b!.position);
      db.prepare('UPDATE events SET position = ? WHERE position = -1').run(b!.position);
    });
    const report = await verifyFile(file);
    expect(report.problem).toMatchObject({ kind: 'missing', streamId: 'project-1', revision: 1n });
  });

  it('finds events of two streams swapped in the log through the checkpoint', async () => {
    const file = freshFile();
    copyFileSync(pristine, file);
    tamper(file, (db) => {
      const a = db.prepare<[], { position: bigint }>("SELECT position FROM events WHERE stream_id = 'project-1' AND revision = 1").get()!;
      const b = db.prepare<[], { position: bigint }>("SELECT position FROM events WHERE stream_id = 'user-7' AND revision = 0").get()!;
      db.prepare('UPDATE events SET position = -1 WHERE position = ?').run(a.position);
      db.prepare('UPDATE events SET position = ? WHERE position = ?').run(a.position, b.position);
      db.prepare('UPDATE events SET position = ? WHERE position = -1').run(b.position);
    });
    expect((await verifyFile(file)).problem?.kind).toBe('checkpoint');
  });

  it('chains a log written before events were chained when it is first opened', async () => {
    const file = freshFile();
    copyFileSync(pristine, file);
    tamper(file, (db) => {
      db.exec("UPDATE events SET hash = NULL; DELETE FROM meta WHERE key = 'chained'");
    });
    const report = await verifyFile(file);
    expect(report.problem).toBeUndefined();
    expect(report.checkpointsMatched).toBe(2);
  });

  it('records a checkpoint only when the log has moved, and once when two race', async () => {
    const file = freshFile();
    copyFileSync(pristine, file);
    const store = SqliteEventStore.open(file);
    try {
      expect(await recordLogCheckpoint(store)).toBeUndefined();
      await store.appendToStream('project-2', [newEvent('ProjectCreated')], 'no_stream');
      const outcomes = await Promise.all([recordLogCheckpoint(store), recordLogCheckpoint(store)]);
      expect(outcomes.filter((o) => o !== undefined)).toHaveLength(1);
      const report = await verifyLog(store);
      expect(report.problem).toBeUndefined();
      expect(report.checkpointsMatched).toBe(3);
    } finally {
      await store.close();
    }
  });

  it('keeps its checkpoint between periodic runs, reading only what was recorded since, and stays verifiable', async () => {
    const file = freshFile();
    copyFileSync(pristine, file);
    const store = SqliteEventStore.open(file);
    const periodic = startLogCheckpoints(store, pino({ level: 'silent' }), 3_600_000);
    try {
      await periodic.runOnce();
      await store.appendToStream('project-3', [newEvent('ProjectCreated')], 'no_stream');
      await periodic.runOnce();
      await periodic.runOnce();
      await store.appendToStream('project-3', [newEvent('ProjectUpdated')], 0n);
      await periodic.runOnce();
      const recorded = (await store.readStream(AUDIT_LOG_STREAM)).length;
      // The two of the scripted log, and one for each time the log had moved.
      expect(recorded).toBe(4);
      const report = await verifyLog(store);
      expect(report.problem).toBeUndefined();
      expect(report.checkpointsMatched).toBe(4);
    } finally {
      await periodic.stop();
      await store.close();
    }
  });
});
