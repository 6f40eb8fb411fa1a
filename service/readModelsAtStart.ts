// Before a start opens the read models: are they whole, and are they still the log's? A log restored
// from a backup (or that lost its write-ahead log in a crash) is behind the checkpoints: resumed as
// they are, the read models would serve what the log no longer holds and skip every event appended
// at positions below them, acknowledged uploads included. A damaged read-models file would kill the
// start, or the process at its first write. The embedded read models are disposable: rebuilt from
// the log here; read models in MongoDB (shared, other hosts may use them) are refused, saying why.
import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Logger } from 'pino';
import { SAGA_NAMES } from '../commands/sagas/sagaNames';
import { sagaCheckpointName } from '../commands/sagas/sagaRunner';
import { allProjections } from '../projections';
import type { Position } from '../stores/eventstore/eventStore';
import { MongoReadStore } from '../stores/readstore/mongoReadStore';
import { isStorageFullError, StorageFullError } from '../stores/storageFull';
import type { Checkpoint } from '../stores/readstore/readStore';
import { SqliteReadStore } from '../stores/readstore/sqliteReadStore';
import { openLog, READ_MODELS_FILE } from './composition';
import type { Config } from './configuration';
import { DataFolderBusyError } from './dataFolderLock';
import { rebuildReadModels } from './rebuild';

/** The read models cannot be used with this log and cannot be rebuilt here; the operator must act. */
export class ReadModelsRefusedError extends Error {
  readonly code = 'READ_MODELS_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'ReadModelsRefusedError';
  }
}

/** Every checkpoint the read store holds: the projections' and the sagas'. */
const checkpointNames = (): string[] => [...allProjections.map((p) => p.checkpoint), ...SAGA_NAMES.map(sagaCheckpointName)];

const SQLITE_DAMAGE = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB']);

/**
 * Why the SQLite file at `file` is damaged, or undefined when it is whole (or absent). Only damage
 * counts: a file that cannot be opened for another reason (permissions) is not the log's to replace.
 */
export function damageOf(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    // The pages' structure, without the cross-checks of indexes (integrity_check): seconds on gigabytes.
    const rows = db.pragma('quick_check(1)') as { quick_check: string }[];
    const verdict = rows[0]?.quick_check;
    return verdict === 'ok' ? undefined : (verdict ?? 'quick_check gave no answer');
  } catch (error) {
    if (SQLITE_DAMAGE.has((error as { code?: string }).code ?? '')) return (error as Error).message;
    // Not damage: a full disk (SQLite cannot even map its shared memory) is said in one line.
    throw isStorageFullError(error) ? new StorageFullError(file, error) : error;
  } finally {
    db?.close();
  }
}

/** A checkpoint past the log's last event: the log lost what the read models were built from. */
export interface CheckpointAhead {
  name: string;
  position: Position;
}

interface Comparison {
  head: Position | undefined;
  ahead: CheckpointAhead[];
  /** Checkpoints stored for a log of another identity. */
  foreign: string[];
}

async function compareWithLog(config: Config, checkpoints: (names: string[]) => Promise<Map<string, Checkpoint>>): Promise<Comparison> {
  const opened = await openLog(config);
  try {
    const head = await opened.events.headPosition();
    const identity = await opened.events.identity();
    const ahead: CheckpointAhead[] = [];
    const foreign: string[] = [];
    for (const [name, checkpoint] of await checkpoints(checkpointNames())) {
      if (checkpoint.store !== undefined && checkpoint.store !== identity) foreign.push(name);
      else if (checkpoint.position > (head ?? 0n)) ahead.push({ name, position: checkpoint.position });
    }
    return { head, ahead, foreign };
  } finally {
    await opened.close();
  }
}

async function mongoCheckpoints(config: Config, names: string[]): Promise<Map<string, Checkpoint>> {
  const store = await MongoReadStore.connect(config.mongoUrl!, config.mongoDb);
  try {
    const found = new Map<string, Checkpoint>();
    for (const name of names) {
      const checkpoint = await store.readCheckpoint(name);
      if (checkpoint) found.set(name, checkpoint);
    }
    return found;
  } finally {
    await store.close();
  }
}

const describeAhead = (ahead: readonly CheckpointAhead[]): string => ahead.map((a) => `${a.name} at ${a.position}`).join(', ');

/** The rebuild's progress as log lines. */
const progressLines = (log: Logger) => ({
  write: (text: string) => {
    const line = text.trim();
    if (line) log.info(line);
  },
});

async function rebuildAtStart(config: Config, log: Logger, why: string): Promise<void> {
  try {
    await rebuildReadModels(config, log, progressLines(log));
  } catch (error) {
    if (error instanceof DataFolderBusyError) {
      throw new ReadModelsRefusedError(`${why}; they cannot be rebuilt while another service process uses ${config.dataDir}: stop every process on it, then start one (it rebuilds them) or run npm run rebuild`);
    }
    throw error;
  }
  log.warn({ file: path.join(config.dataDir, READ_MODELS_FILE) }, 'read models rebuilt from the log at start');
}

/**
 * Run at every start, before the read models are opened. On the embedded read models (SQLite):
 * a damaged file, checkpoints past the log's last event, or (with the embedded log beside them)
 * checkpoints of a log that is no longer there make a rebuild from the log, said plainly in the
 * log. On MongoDB, checkpoints past the log's end refuse the start (ReadModelsRefusedError).
 * Checkpoints of another log stay the projections' to refuse (ForeignCheckpointError) wherever the
 * log is a server: the configuration may point at the wrong one, which no rebuild should paper over.
 */
export async function checkReadModelsAtStart(config: Config, log: Logger): Promise<void> {
  if (config.readStore === 'memory') return;
  const eventsFile = config.eventStoreUrl ? 'the EventStoreDB log' : path.join(config.dataDir, 'events.sqlite');
  if (config.readStore === 'mongodb') {
    if (!config.mongoUrl) return;
    const { head, ahead } = await compareWithLog(config, (names) => mongoCheckpoints(config, names));
    if (ahead.length === 0) return;
    throw new ReadModelsRefusedError(
      `The read models in MongoDB are ahead of the log (${eventsFile} ends at position ${head ?? 'none: it is empty'}; checkpoints ${describeAhead(ahead)}): ` +
        'the log was restored from a backup or lost its last events. Stop every service process and run npm run rebuild (see docs/recovery.md)',
    );
  }
  const file = path.join(config.dataDir, READ_MODELS_FILE);
  const damage = damageOf(file);
  if (damage !== undefined) {
    log.error({ file, damage }, `the read models file ${file} is damaged (${damage}); rebuilding it from the log`);
    await rebuildAtStart(config, log, `The read models file ${file} is damaged (${damage})`);
    return;
  }
  const { head, ahead, foreign } = await compareWithLog(config, async (names) => SqliteReadStore.checkpointsIn(file, names));
  // Beside the embedded log, checkpoints of another identity mean the log was made anew: its first
  // commit (the identity) never reached the file, so neither did any event after it.
  const lost = config.eventStoreUrl ? [] : foreign;
  if (ahead.length === 0 && lost.length === 0) return;
  const why =
    ahead.length > 0
      ? `The log ${eventsFile} ends at position ${head ?? 'none (it is empty)'}, behind the read models in ${file} (checkpoints ${describeAhead(ahead)}): it was restored from a backup or lost its last events (its -wal file)`
      : `The log ${eventsFile} is not the one the read models in ${file} were built from (checkpoints ${lost.join(', ')} name another log identity): it was made anew, or replaced`;
  log.warn({ eventsFile, readModelsFile: file, head: head?.toString() ?? null, ahead: ahead.map((a) => ({ name: a.name, position: a.position.toString() })), otherLog: lost }, `${why}; rebuilding the read models from the log so that they serve nothing it no longer holds and skip none of its new events`);
  await rebuildAtStart(config, log, why);
}
