// `npm run rebuild`: drops the read models and replays the whole log into them, showing progress
// (a bar on a terminal, plain lines otherwise) and the events applied per second. It holds the data
// folder's exclusive lock, so it refuses to run beside a service process on the same folder, and a
// service refuses to start while it runs.
import { mkdtemp, open, readdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { compareReadModels, compareWithRebuild, type ReadModelComparison } from '../projections/readModelCheck';
import { loadCheckpoint } from '../processing/checkpoint';
import { readModelIndexes } from '../projections/readModelIndexes';
import { SqliteReadStore } from '../stores/readstore/sqliteReadStore';
import { allProjections } from '../projections';
import { SAGA_NAMES } from '../commands/sagas/sagaNames';
import { sagaCheckpointName } from '../commands/sagas/sagaRunner';
import { ProjectionRunner } from '../projections/projectionRunner';
import type { Projection } from '../projections/projection';
import { describeProjectionFailure, type ProjectionFailure } from '../projections/projectionStatus';
import { serviceModule, ThreadPool } from '../commands/jobs/threadPool';
import type { RebuildPartInput, RebuildPartResult } from './rebuildPart';
import type { EventStore, Position, StoredEvent, SubscribeOptions, Subscription } from '../stores/eventstore/eventStore';
import type { Checkpoint, ReadStore } from '../stores/readstore/readStore';
import { createReadModelIndexes, openLog, openStores, READ_MODELS_FILE, READ_MODELS_GROUP_COMMIT_MS } from './composition';
import type { Config } from './configuration';
import { DataFolderLock } from './dataFolderLock';

/** Where progress goes: stderr by default; a bar when it is a terminal. */
export interface ProgressOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface RebuildResult {
  events: number;
  ms: number;
  eventsPerSecond: number;
  position: Position | undefined;
}

const BAR_WIDTH = 30;
const TTY_EVERY_MS = 200;
const LINE_EVERY_MS = 5000;

/** The source's events, each counted as it is taken: a wrapped next() costs less than another async generator. */
function countEach(source: AsyncIterable<StoredEvent>, onEvent: () => void): AsyncIterator<StoredEvent> {
  const iterator = source[Symbol.asyncIterator]();
  const counted = (result: IteratorResult<StoredEvent>) => {
    if (!result.done) onEvent();
    return result;
  };
  return {
    next: () => iterator.next().then(counted),
    return: async (value?: unknown) => (await iterator.return?.(value)) ?? { done: true, value: undefined },
  };
}

const iterable = (iterator: () => AsyncIterator<StoredEvent>): AsyncIterable<StoredEvent> => ({ [Symbol.asyncIterator]: iterator });

/** Counts the events the runner reads, for events per second (positions need not be consecutive). */
function counting(events: EventStore, onEvent: () => void): EventStore {
  return new Proxy(events, {
    get(target, property, receiver) {
      if (property === 'subscribeToAll') {
        return (options?: SubscribeOptions): Subscription => {
          const subscription = target.subscribeToAll(options);
          return { close: () => subscription.close(), [Symbol.asyncIterator]: () => countEach(subscription, onEvent) };
        };
      }
      if (property === 'readAll') return (options?: Parameters<EventStore['readAll']>[0]) => iterable(() => countEach(target.readAll(options), onEvent));
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function describeProgress(applied: Position | undefined, head: Position, events: number, ms: number, tty: boolean): string {
  const fraction = head === 0n || applied === undefined ? (applied === undefined ? 0 : 1) : Math.min(1, Number((applied * 10_000n) / head) / 10_000);
  const rate = ms > 0 ? Math.round((events * 1000) / ms) : 0;
  const percent = `${(fraction * 100).toFixed(1)}%`;
  const figures = `${events.toLocaleString('en-US')} events, ${rate.toLocaleString('en-US')} events/s`;
  if (!tty) return `rebuild: ${percent} (position ${applied ?? 0} of ${head}), ${figures}\n`;
  const filled = Math.round(fraction * BAR_WIDTH);
  return `\r[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${percent.padStart(6)} ${figures}   `;
}

/**
 * The scratch files of the parts of a rebuild run on other cores (rebuildPart.ts), in the data
 * folder: each name starts so (`read-models.rebuild-part.<group>.sqlite`).
 */
export const REBUILD_PART_PREFIX = 'read-models.rebuild-part';

const partFileOf = (folder: string, group: readonly Projection[]): string => path.join(folder, `${REBUILD_PART_PREFIX}.${group.map((p) => p.name).join('+')}.sqlite`);

/**
 * The projections a rebuild of the embedded store replays on other cores, a group per worker
 * thread, each into a scratch file of its own; the main thread replays the others, then copies the
 * parts in. Any projection could run apart (each touches only its own collections); only the
 * history (a document for every event) does by default. With 2 cores, the samples apart as well
 * (three threads, each reading and parsing the whole log) was slower on a quiet machine: a million
 * events in 123 s against 82-100 s (docs/startup.md).
 */
export const GROUPS_APART: readonly (readonly string[])[] = [['history']];

function projectionGroupsApart(config: Config, names: readonly (readonly string[])[]): Projection[][] {
  if (config.mongoUrl || config.eventStoreUrl) return [];
  return names.map((group) => {
    const projections = allProjections.filter((p) => group.includes(p.name));
    if (projections.length !== group.length) throw new Error(`Unknown projections among ${group.join(', ')}`);
    return projections;
  });
}

async function removeDatabaseFile(file: string): Promise<void> {
  await Promise.all(['', '-wal', '-shm', '-journal'].map((suffix) => rm(file + suffix, { force: true })));
}

/** Where the embedded rebuild loads the read models, in the data folder; it replaces read-models.sqlite at the end. */
export const REBUILT_FILE = 'read-models.rebuilding.sqlite';

/** Removes what a rebuild cut short (killed, a power cut) left in the data folder. */
export async function removeRebuildLeftovers(dataDir: string): Promise<void> {
  const parts = (await readdir(dataDir)).filter((name) => name.startsWith(REBUILD_PART_PREFIX));
  await Promise.all([removeDatabaseFile(path.join(dataDir, REBUILT_FILE)), ...parts.map((name) => rm(path.join(dataDir, name), { force: true }))]);
}

/**
 * Puts the rebuilt file in the place of the live one, both closed. The rename is atomic: whatever
 * happens, the folder holds either the old read models or the new, whole. The live file's write-ahead
 * log is gone after its clean close; one left anyway must not be replayed into the new file.
 */
async function replaceDatabaseFile(rebuilt: string, live: string): Promise<void> {
  await Promise.all(['-wal', '-shm'].map((suffix) => rm(live + suffix, { force: true })));
  await rename(rebuilt, live);
  // The rename itself is durable once the folder is synced.
  const folder = await open(path.dirname(live), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/**
 * The sagas' checkpoints in the live read models. A file that cannot be read (damaged, which a
 * rebuild is there to mend) gives none: the sagas then read the log again, their reactions idempotent.
 */
function sagaProgress(liveFile: string, names: readonly string[], log: Logger): Map<string, Checkpoint> {
  try {
    return SqliteReadStore.checkpointsIn(liveFile, names);
  } catch (error) {
    log.warn({ err: error, file: liveFile }, "could not read the sagas' checkpoints in the read models being replaced; the sagas will read the log again from its start");
    return new Map();
  }
}

/**
 * The sagas' progress as far as this log goes. A checkpoint past the log's last event (a log restored
 * from a backup, or that lost its write-ahead log) comes back to that event: the log up to there is
 * what the saga saw, so it neither reacts again to old events (e-mails sent twice) nor skips the new
 * ones, which take the positions after it. A checkpoint of another log is dropped: every event of
 * this one is new to the saga (its reactions are idempotent: e-mails check their stream first).
 */
async function sagaCheckpointsFor(events: EventStore, stored: ReadonlyMap<string, Checkpoint>): Promise<Map<string, Checkpoint>> {
  const head = await events.headPosition();
  const identity = await events.identity();
  const kept = new Map<string, Checkpoint>();
  for (const [name, checkpoint] of stored) {
    if (head === undefined || (checkpoint.store !== undefined && checkpoint.store !== identity)) continue;
    kept.set(name, checkpoint.position > head ? { position: head, store: identity } : checkpoint);
  }
  return kept;
}

/**
 * Drops the read models and replays the whole log into them. On the embedded store the new read
 * models are loaded into a file of their own that replaces the live one only once complete, so a
 * rebuild that fails or is cut short leaves the read models as they were (and costs no drop of
 * gigabytes of tables first); MongoDB's are dropped and replayed in place.
 */
export async function rebuildReadModels(
  config: Config,
  log: Logger,
  output: ProgressOutput = process.stderr,
  /** The groups of projections replayed apart, each on a core of its own (GROUPS_APART by default). */
  groupsApart: readonly (readonly string[])[] = GROUPS_APART,
): Promise<RebuildResult | undefined> {
  if (config.readStore === 'memory') {
    log.info('READ_STORE is memory: the read models are rebuilt from the log at every start; nothing to rebuild');
    return undefined;
  }
  const lock = DataFolderLock.exclusive(config.dataDir);
  const liveFile = path.join(config.dataDir, READ_MODELS_FILE);
  const rebuiltFile = path.join(config.dataDir, REBUILT_FILE);
  let replace = false;
  // Saga progress is not a read model: kept across the rebuild, or every saga would read the whole log
  // again at the next start (harmless, their reactions are idempotent, but minutes on a large log).
  const sagaCheckpointNames = SAGA_NAMES.map(sagaCheckpointName);
  try {
    let result: RebuildResult;
    if (config.readStore === 'sqlite') {
      // Only the log is opened: the live read models are read for the sagas' progress alone, as they
      // are (a file of an older layout is not laid out anew only to be replaced), and no blob is read.
      const opened = await openLog(config);
      try {
        const sagaCheckpoints = sagaProgress(liveFile, sagaCheckpointNames, log);
        await removeRebuildLeftovers(config.dataDir);
        // The new file loads in bulk: this process holds the folder's lock, so nothing reads it meanwhile.
        const target = SqliteReadStore.open(rebuiltFile, { indexes: readModelIndexes, groupCommitMs: READ_MODELS_GROUP_COMMIT_MS });
        try {
          await target.dropAllForBulkLoad();
          result = complete(await replay(config, log, output, opened.events, target, { store: target, partFolder: config.dataDir, buildIndexes: true, groupsApart }));
          for (const [name, kept] of await sagaCheckpointsFor(opened.events, sagaCheckpoints)) await target.setCheckpoint(name, kept.position, kept.store);
        } finally {
          await target.close();
        }
        replace = true;
      } finally {
        await opened.close();
      }
      await replaceDatabaseFile(rebuiltFile, liveFile);
    } else {
      const stores = await openStores(config, log);
      try {
        const stored = new Map<string, Checkpoint>();
        for (const name of sagaCheckpointNames) {
          const checkpoint = await stores.readStore.readCheckpoint(name);
          if (checkpoint) stored.set(name, checkpoint);
        }
        const sagaCheckpoints = await sagaCheckpointsFor(stores.events, stored);
        await stores.readStore.dropAll();
        // Dropping a MongoDB collection drops its indexes.
        await createReadModelIndexes(config);
        const replayed = await replay(config, log, output, stores.events, stores.readStore, undefined);
        // Put back even when a projection failed: these read models were dropped, the sagas' progress was not.
        for (const [name, kept] of sagaCheckpoints) await stores.readStore.setCheckpoint(name, kept.position, kept.store);
        result = complete(replayed);
      } finally {
        await stores.close();
      }
    }
    log.info({ ms: result.ms, events: result.events, eventsPerSecond: result.eventsPerSecond, position: result.position?.toString() }, 'read models rebuilt');
    return result;
  } finally {
    if (!replace) await removeDatabaseFile(rebuiltFile);
    lock.release();
  }
}

/** An embedded store in a bulk load, and where the projections that run apart load on other cores. */
interface BulkTarget {
  store: SqliteReadStore;
  /** The folder of the parts' scratch files. */
  partFolder: string;
  /** The groups of projections replayed apart (projectionGroupsApart). */
  groupsApart: readonly (readonly string[])[];
  /** Whether to build the declared indexes at the end (the live read models need them; a scratch one compared by `_id` does not). */
  buildIndexes: boolean;
}

interface Replayed extends RebuildResult {
  /** Where a projection stopped short of the head; empty when every one reached it. */
  failures: ProjectionFailure[];
}

/**
 * Replays the log into `readStore`, showing progress. Into an embedded store in a bulk load, the
 * groups apart (projectionGroupsApart) replay each on a core of its own into a file of its own,
 * copied in before the indexes are built.
 */
async function replay(config: Config, log: Logger, output: ProgressOutput, source: EventStore, readStore: ReadStore, bulk: BulkTarget | undefined): Promise<Replayed> {
  let events = 0;
  const groups = bulk ? projectionGroupsApart(config, bulk.groupsApart) : [];
  const apart = new Set(groups.flat());
  const pool = groups.length > 0 ? new ThreadPool(groups.length) : undefined;
  const parts: { group: Projection[]; file: string; done: Promise<RebuildPartResult> }[] = [];
  if (pool && bulk) {
    for (const group of groups) {
      const file = partFileOf(bulk.partFolder, group);
      await removeDatabaseFile(file);
      const input: RebuildPartInput = {
        log: { dataDir: config.dataDir, eventStoreUrl: config.eventStoreUrl, mongoUrl: config.mongoUrl, mongoDb: config.mongoDb },
        readModelsFile: file,
        projections: group.map((p) => p.name),
        groupCommitMs: READ_MODELS_GROUP_COMMIT_MS,
      };
      const done = pool.run<RebuildPartResult>({ module: serviceModule('service/rebuildPart'), name: 'rebuildPart', input });
      // Awaited below; a failure meanwhile must not go unheard.
      done.catch(() => {});
      parts.push({ group, file, done });
    }
  }
  // Its batches: the runner's default for the store (smaller into SQLite, where there are no round trips).
  const runner = new ProjectionRunner(counting(source, () => events++), readStore, allProjections.filter((p) => !apart.has(p)), log);
  const head = (await source.headPosition()) ?? 0n;
  const started = Date.now();
  const tty = output.isTTY === true;
  const show = () => output.write(describeProgress(runner.appliedPosition, head, events, Date.now() - started, tty));
  const timer = setInterval(show, tty ? TTY_EVERY_MS : LINE_EVERY_MS);
  const partFailures: ProjectionFailure[] = [];
  try {
    await runner.start();
    await runner.stop();
    if (bulk) {
      // Every part is awaited before any is copied: none is still writing when the copies begin, or when a failure leaves.
      const results = await Promise.allSettled(parts.map((part) => part.done));
      for (const result of results) if (result.status === 'rejected') throw result.reason;
      for (const [i, part] of parts.entries()) {
        partFailures.push(...(results[i] as PromiseFulfilledResult<RebuildPartResult>).value.failures);
        bulk.store.absorb(part.file, part.group.flatMap((p) => [...p.writes]), part.group.map((p) => p.checkpoint));
      }
    }
    // Its indexes built and everything synced: part of the rebuild's time.
    if (bulk?.buildIndexes) await bulk.store.endBulkLoad();
  } finally {
    clearInterval(timer);
    await pool?.close();
    for (const part of parts) await removeDatabaseFile(part.file);
  }
  const ms = Date.now() - started;
  show();
  if (tty) output.write('\n');
  const failures = [...(await runner.failures()), ...partFailures];
  return { events, ms, eventsPerSecond: ms > 0 ? Math.round((events * 1000) / ms) : events, position: runner.appliedPosition, failures };
}

/** A rebuild that left a read model behind must not pass for a complete one. */
function complete(replayed: Replayed): RebuildResult {
  if (replayed.failures.length > 0) throw new Error(`Rebuild incomplete: ${replayed.failures.map(describeProjectionFailure).join('; ')}`);
  const { failures: _none, ...result } = replayed;
  return result;
}

/**
 * `npm run rebuild -- --verify`: rebuilds every read model from the log into a scratch SQLite file
 * (never the live store) and compares it with the live one document by document. Holds
 * the data folder's exclusive lock, so no service moves the live read models meanwhile. Answers the
 * number of differing documents, printing the first ones.
 */
export async function verifyReadModels(config: Config, log: Logger, output: ProgressOutput = process.stderr, out: ProgressOutput = process.stdout): Promise<number> {
  if (config.readStore === 'memory') {
    log.info('READ_STORE is memory: the read models are rebuilt from the log at every start; nothing to compare');
    return 0;
  }
  const lock = DataFolderLock.exclusive(config.dataDir);
  const scratchDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-rebuild-verify-'));
  try {
    const stores = await openStores(config, log);
    // A scratch file nobody else opens, thrown away after: loaded in bulk (unsynced, grouped commits,
    // indexes built only where a handler queries), its answers not kept (each is read once).
    const scratch = SqliteReadStore.open(path.join(scratchDir, 'read-models.sqlite'), { indexes: readModelIndexes, groupCommitMs: READ_MODELS_GROUP_COMMIT_MS, answerCache: false });
    try {
      await scratch.dropAllForBulkLoad();
      const head = (await stores.events.headPosition()) ?? 0n;
      const started = Date.now();
      const tty = output.isTTY === true;
      let shown = started;
      const progress = (events: number, position: Position | undefined) => {
        if (Date.now() - shown < (tty ? TTY_EVERY_MS : LINE_EVERY_MS)) return;
        shown = Date.now();
        output.write(describeProgress(position, head, events, shown - started, tty));
      };
      const checkpoints = await Promise.all(allProjections.map((p) => loadCheckpoint(stores.readStore, p.checkpoint, stores.events)));
      let comparison: ReadModelComparison;
      if (checkpoints.every((c) => c === head)) {
        // The usual case after a clean stop: every read model at the head, rebuilt as a rebuild builds
        // them (the history on a second core), then compared. A projection the replay could not take
        // past an event shows as differences; it is named too.
        const replayed = await replay(config, log, output, stores.events, scratch, { store: scratch, partFolder: scratchDir, buildIndexes: false, groupsApart: GROUPS_APART });
        for (const failure of replayed.failures) out.write(`the rebuild stopped short: ${describeProjectionFailure(failure)}\n`);
        comparison = { ...(await compareReadModels(stores.readStore, scratch, allProjections)), events: replayed.events };
      } else {
        // Some read model stopped short of the head (a failed projection): each is replayed to its own point.
        comparison = await compareWithRebuild(stores.events, stores.readStore, allProjections, scratch, progress);
        if (tty) output.write('\n');
      }
      const ms = Date.now() - started;
      const rate = ms > 0 ? Math.round((comparison.events * 1000) / ms) : comparison.events;
      out.write(`rebuilt ${comparison.events} events into a scratch store (${rate} events/s) and compared ${comparison.documents} documents in ${comparison.collections} collections: `);
      if (comparison.differing === 0) {
        out.write('identical\n');
      } else {
        out.write(`${comparison.differing} differ\n`);
        for (const d of comparison.differences) out.write(`${d.collection} ${JSON.stringify(d.id)}:\n  live:    ${JSON.stringify(d.live) ?? 'missing'}\n  rebuilt: ${JSON.stringify(d.rebuilt) ?? 'missing'}\n`);
      }
      return comparison.differing;
    } finally {
      await scratch.close();
      await stores.close();
    }
  } finally {
    await rm(scratchDir, { recursive: true, force: true });
    lock.release();
  }
}
