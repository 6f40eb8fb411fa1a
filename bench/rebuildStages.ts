// Where a rebuild's time goes, stage by stage, on a filled data folder (bench/fillLog.ts), each
// stage alone on one thread: CPU microseconds per event (this process's user + system time, which
// a shared machine's other load inflates less than wall time) and wall time. Not part of `npm run
// bench`: `npx tsx bench/rebuildStages.ts <data folder>`. The folder is only read; the scratch read
// models go to a temporary folder.
//
// Stages: the log's rows read (SQL alone), then JSON-parsed, then as the runner takes them (the
// sealing store's subscription in batches), then each projection group replayed into a bulk load
// of its own (reading included), then the index builds at the end of the load.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { allProjections } from '../projections';
import { ProjectionRunner } from '../projections/projectionRunner';
import type { Projection } from '../projections/projection';
import { readModelIndexes } from '../projections/readModelIndexes';
import { eventBatches } from '../processing/eventBatches';
import { openLog, type LogLocation } from '../service/composition';
import { SqliteReadStore } from '../stores/readstore/sqliteReadStore';

const given = process.argv[2];
if (!given) throw new Error('usage: npx tsx bench/rebuildStages.ts <data folder>');
const dataDir: string = given;
/** The embedded log only. */
const location: LogLocation = { dataDir, eventStoreUrl: undefined, mongoUrl: undefined, mongoDb: 'edge_ml' };

interface Measured {
  stage: string;
  events: number;
  cpuMs: number;
  wallMs: number;
}
const results: Measured[] = [];

/** REBUILD_STAGES=history,samples runs only the stages whose name holds one of these words. */
const only = process.env.REBUILD_STAGES?.split(',').filter(Boolean);

async function measure(stage: string, work: () => Promise<number>): Promise<void> {
  if (only && !only.some((word) => stage.includes(word))) return;
  global.gc?.();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const events = await work();
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const result = { stage, events, cpuMs: (used.user + used.system) / 1000, wallMs };
  results.push(result);
  console.log(`${stage.padEnd(44)} ${String(events).padStart(8)} events  ${((result.cpuMs * 1000) / Math.max(1, events)).toFixed(1).padStart(6)} us CPU/event  ${((wallMs * 1000) / Math.max(1, events)).toFixed(1).padStart(6)} us wall/event`);
}

async function rawRows(parse: boolean): Promise<number> {
  const db = new Database(path.join(dataDir, 'events.sqlite'), { readonly: true });
  db.defaultSafeIntegers(true);
  const page = db.prepare<[bigint, number], { position: bigint; stream_id: string; revision: bigint; event_id: string; type: string; data: string; metadata: string }>(
    'SELECT position, stream_id, revision, event_id, type, data, metadata FROM events WHERE position > ? ORDER BY position LIMIT ?',
  );
  let after = 0n;
  let events = 0;
  let sink = 0;
  for (;;) {
    const rows = page.all(after, 256);
    for (const row of rows) {
      if (parse) sink += Object.keys(JSON.parse(row.data) as object).length + Object.keys(JSON.parse(row.metadata) as object).length;
      after = row.position;
      events += 1;
    }
    if (rows.length < 256) break;
  }
  db.close();
  return sink >= 0 ? events : 0;
}

async function asTheRunnerReads(): Promise<number> {
  const opened = await openLog(location);
  try {
    const subscription = opened.events.subscribeToAll();
    const head = (await opened.events.headPosition()) ?? 0n;
    let events = 0;
    for await (const batch of eventBatches(subscription, 100)) {
      events += batch.length;
      if (batch.at(-1)!.position >= head) break;
    }
    await subscription.close();
    return events;
  } finally {
    await opened.close();
  }
}

async function replay(projections: readonly Projection[], scratch: string, buildIndexes: boolean): Promise<number> {
  const opened = await openLog(location);
  const store = SqliteReadStore.open(path.join(scratch, `${projections[0]!.name}-${projections.length}.sqlite`), { indexes: readModelIndexes, groupCommitMs: 20 });
  try {
    await store.dropAllForBulkLoad();
    const runner = new ProjectionRunner(opened.events, store, projections, pino({ level: 'warn' }));
    await runner.start();
    await runner.stop();
    const failures = await runner.failures();
    if (failures.length > 0) throw new Error(`projection ${failures[0]!.projection} failed: ${failures[0]!.error}`);
    if (buildIndexes) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      await store.endBulkLoad();
      const used = process.cpuUsage(cpu);
      console.log(`  of which index builds and sync: ${((used.user + used.system) / 1000).toFixed(0)} ms CPU, ${(performance.now() - started).toFixed(0)} ms wall`);
    }
    return Number((await opened.events.headPosition()) ?? 0n);
  } finally {
    await store.close();
    await opened.close();
  }
}

const scratch = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-rebuild-stages-'));
try {
  const byName = (names: string[]) => allProjections.filter((p) => names.includes(p.name));
  await measure('log rows read (SQL only)', () => rawRows(false));
  await measure('log rows read and JSON-parsed', () => rawRows(true));
  await measure('log as the runner reads it (sealing, batches)', asTheRunnerReads);
  await measure('replay: history (reading included)', () => replay(byName(['history']), scratch, false));
  await measure('replay: samples (reading included)', () => replay(byName(['samples']), scratch, false));
  await measure('replay: the other 19 (reading included)', () => replay(allProjections.filter((p) => p.name !== 'history' && p.name !== 'samples'), scratch, false));
  await measure('replay: all but history, indexes built', () => replay(allProjections.filter((p) => p.name !== 'history'), scratch, true));
  await measure('replay: history, indexes built', () => replay(byName(['history']), scratch, true));
} finally {
  await rm(scratch, { recursive: true, force: true });
}
