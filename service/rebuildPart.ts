// A part of `npm run rebuild` that runs on a core of its own: some projections replayed from the
// embedded log into a scratch SQLite file of their own, which the rebuild then copies into the read
// models (SqliteReadStore.absorb) before it builds the indexes. Each projection touches only its own
// collections, so any could run apart; service/rebuild.ts says which groups do (GROUPS_APART).
// Loaded by the thread pool (commands/jobs/threadPool.ts) in a worker thread.
import pino from 'pino';
import { allProjections } from '../projections';
import { ProjectionRunner } from '../projections/projectionRunner';
import type { ProjectionFailure } from '../projections/projectionStatus';
import { readModelIndexes } from '../projections/readModelIndexes';
import { SqliteReadStore } from '../stores/readstore/sqliteReadStore';
import { openLog, type LogLocation } from './composition';

export interface RebuildPartInput {
  /** Where the log and its keys are, as the rebuild's configuration says. */
  log: LogLocation;
  /** The scratch file, made anew. */
  readModelsFile: string;
  projections: string[];
  groupCommitMs: number;
}

export interface RebuildPartResult {
  /** Where a projection stopped short of the head; empty when every one reached it. */
  failures: ProjectionFailure[];
}

/** Replays the named projections into the scratch file, in a bulk load whose indexes are never built there. */
export async function rebuildPart(input: RebuildPartInput): Promise<RebuildPartResult> {
  const projections = allProjections.filter((p) => input.projections.includes(p.name));
  if (projections.length !== input.projections.length) throw new Error(`Unknown projections among ${input.projections.join(', ')}`);
  const opened = await openLog(input.log);
  const store = SqliteReadStore.open(input.readModelsFile, { indexes: readModelIndexes, groupCommitMs: input.groupCommitMs });
  try {
    await store.dropAllForBulkLoad();
    const runner = new ProjectionRunner(opened.events, store, projections, pino({ level: 'warn' }).child({ part: input.projections.join(',') }));
    await runner.start();
    await runner.stop();
    return { failures: await runner.failures() };
  } finally {
    // Closed with its load unfinished: the rows and checkpoints are committed, and the file is only read by absorb.
    await store.close();
    await opened.close();
  }
}
