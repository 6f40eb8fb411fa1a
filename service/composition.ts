// The composition of the storage adapters the configuration chooses; nothing above the ports knows
// which. The embedded default keeps everything in the data folder: the log and the small sample
// files (events.sqlite), the sealing keys (keys.sqlite), large sample files (blobs/) and the read models
// (read-models.sqlite); MONGO_URL moves read models, files and keys to MongoDB.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { sealedFieldsByEventType } from '../domain/personalData';
import { readModelIndexes } from '../projections/readModelIndexes';
import type { BlobStore } from '../stores/blobstore/blobStore';
import { FileBlobStore } from '../stores/blobstore/fileBlobStore';
import { GridFsBlobStore } from '../stores/blobstore/gridFsBlobStore';
import { SqliteBlobStore } from '../stores/blobstore/sqliteBlobStore';
import { TieredBlobStore } from '../stores/blobstore/tieredBlobStore';
import { EsdbEventStore } from '../stores/eventstore/esdbEventStore';
import type { EventStore } from '../stores/eventstore/eventStore';
import { SqliteEventStore, type LogFileTables } from '../stores/eventstore/sqliteEventStore';
import type { KeyStore } from '../stores/keystore/keyStore';
import { MongoKeyStore } from '../stores/keystore/mongoKeyStore';
import { SealingEventStore } from '../stores/keystore/sealingEventStore';
import { SqliteKeyStore } from '../stores/keystore/sqliteKeyStore';
import { MemoryReadStore } from '../stores/readstore/memoryReadStore';
import { ensureMongoIndexes } from '../stores/readstore/mongoIndexes';
import { MongoReadStore } from '../stores/readstore/mongoReadStore';
import type { ReadStore } from '../stores/readstore/readStore';
import { SqliteReadStore } from '../stores/readstore/sqliteReadStore';
import { openingFile, watchStorageFolder } from '../stores/storageFull';
import type { Config } from './configuration';

/** The embedded read models' file, beside the log. */
export const READ_MODELS_FILE = 'read-models.sqlite';
/** The embedded log and sealing keys, in the data folder. */
const EVENTS_FILE = 'events.sqlite';
/** The small blobs' own file, before they moved into the log's (and still, when the log is EventStoreDB). */
const SMALL_BLOBS_FILE = 'blobs.sqlite';
const KEYS_FILE = 'keys.sqlite';
/**
 * How long the SQLite read store groups writes into one commit. Short against the settle waits
 * (other processes see the writes at the commit), long enough for a burst of projection writes.
 */
export const READ_MODELS_GROUP_COMMIT_MS = 20;

export interface Stores {
  events: SealingEventStore;
  readStore: ReadStore;
  blobs: BlobStore;
  keys: KeyStore;
  close(): Promise<void>;
}

/** The configured read store, its declared indexes created. */
export async function openReadStore(config: Config, log?: Logger): Promise<ReadStore> {
  switch (config.readStore) {
    case 'sqlite':
      return openingFile(path.resolve(config.dataDir, READ_MODELS_FILE), () => sharedSqliteReadStore(path.resolve(config.dataDir, READ_MODELS_FILE), log));
    case 'memory':
      return new MemoryReadStore();
    case 'mongodb': {
      // Checked by loadConfig; repeated for a Config built by hand.
      if (!config.mongoUrl) throw new Error('READ_STORE mongodb needs MONGO_URL');
      const store = await MongoReadStore.connect(config.mongoUrl, config.mongoDb);
      try {
        await createReadModelIndexes(config);
      } catch (error) {
        await store.close();
        throw error;
      }
      return store;
    }
  }
}

/**
 * One connection per read-model file in a process, shared by every service started in it (tests
 * start two on one data folder). Two connections of one thread would deadlock: one holds the write
 * lock through its group-commit window, the other's busy wait blocks the thread its timer needs.
 */
const sqliteReadStores = new Map<string, { store: SqliteReadStore; users: number }>();

/** Rows from which laying a collection out anew takes long enough to say so (about 0.2 s). */
const RELAYOUT_WORTH_SAYING = 10_000;

function sharedSqliteReadStore(file: string, log?: Logger): ReadStore {
  let entry = sqliteReadStores.get(file);
  if (!entry) {
    // Once after an upgrade that changed how rows are laid out: about 10 s per 500,000 rows, before the service answers.
    const onRelayout = (collection: string, rows: number) => {
      if (rows >= RELAYOUT_WORTH_SAYING) log?.info({ collection, rows }, 'laying out a read model\'s rows anew (once, after an upgrade); the service starts when done');
    };
    const onCommitFailure = (error: Error) => log?.error({ err: error, file }, error.message);
    entry = { store: SqliteReadStore.open(file, { indexes: readModelIndexes, groupCommitMs: READ_MODELS_GROUP_COMMIT_MS, onRelayout, onCommitFailure }), users: 0 };
    sqliteReadStores.set(file, entry);
  }
  entry.users++;
  const shared = entry;
  let closed = false;
  return new Proxy(shared.store, {
    get(target, property, receiver) {
      if (property === 'close') {
        return async () => {
          if (closed) return;
          closed = true;
          if (--shared.users > 0) return;
          sqliteReadStores.delete(file);
          await target.close();
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Creates the declared indexes where the store keeps them apart (MongoDB); the others create theirs on open. */
export async function createReadModelIndexes(config: Config): Promise<void> {
  if (config.readStore === 'mongodb' && config.mongoUrl) await ensureMongoIndexes(config.mongoUrl, config.mongoDb, readModelIndexes);
}

/** The log, read through the sealing keys, and the keys: what a replay of the log needs. */
export interface OpenedLog {
  events: SealingEventStore;
  keys: KeyStore;
  /** The log's file, when it is the embedded SQLite one: the small blobs are kept in it. */
  logFile?: LogFileTables;
  close(): Promise<void>;
}

/** What locates the log and its keys: plain data, so a worker thread can open them too. */
export type LogLocation = Pick<Config, 'dataDir' | 'eventStoreUrl' | 'mongoUrl' | 'mongoDb'>;

export async function openLog(config: LogLocation, log?: Logger): Promise<OpenedLog> {
  await mkdir(config.dataDir, { recursive: true });
  // Whatever the stores, uploads are received in this folder first: its free space is watched.
  watchStorageFolder(path.resolve(config.dataDir));
  const eventsFile = path.join(config.dataDir, EVENTS_FILE);
  const onCheckpointFailure = (error: Error) =>
    log?.warn({ err: error }, "the log's checkpoint thread ended: the thread that appends to the log checkpoints it again, a few milliseconds every thousand pages");
  const rawEvents: EventStore = config.eventStoreUrl ? await EsdbEventStore.connect(config.eventStoreUrl) : await openingFile(eventsFile, () => SqliteEventStore.open(eventsFile, { onCheckpointFailure }));
  let keys: KeyStore;
  try {
    const keysFile = path.join(config.dataDir, KEYS_FILE);
    keys = config.mongoUrl ? await MongoKeyStore.connect(config.mongoUrl, `${config.mongoDb}_keys`) : await openingFile(keysFile, () => SqliteKeyStore.open(keysFile));
  } catch (error) {
    await rawEvents.close();
    throw error;
  }
  const events = new SealingEventStore(rawEvents, keys, sealedFieldsByEventType, (subject, event) =>
    log?.error(
      { subject, position: event.position.toString(), eventType: event.type },
      `the sealing key of ${subject} does not open its sealed data (the key store lost its key and made another): that data reads as forgotten; restore the key store (keys.sqlite, or the _keys database) from a backup to read it again`,
    ),
    (subject) => log?.error({ subject }, `the sealing key of ${subject} is missing from the key store though the log holds data sealed with it: no new key is made, its personal data reads as forgotten and its writes of personal data fail; restore the key store from a backup (docs/recovery.md)`),
  );
  return {
    events,
    keys,
    ...(rawEvents instanceof SqliteEventStore ? { logFile: rawEvents.tables() } : {}),
    async close() {
      await Promise.allSettled([events.close(), keys.close()]);
    },
  };
}

/**
 * Small blobs in the log's file (their puts share its group commits: one sync a turn for both), or
 * in `blobs.sqlite` when the log is elsewhere (EventStoreDB); large ones as files. A `blobs.sqlite`
 * from before the move stays a tier for the blobs it holds.
 */
async function openTieredBlobs(config: Config, logFile: LogFileTables | undefined, log?: Logger): Promise<TieredBlobStore> {
  const ownFile = path.join(config.dataDir, SMALL_BLOBS_FILE);
  const onRelayout = () => log?.info("laying out the small sample files' table anew (once, after an upgrade); the service starts when done");
  const openOwnFile = () => openingFile(ownFile, () => SqliteBlobStore.open(ownFile, { onRelayout }));
  const small = logFile ? await openingFile(path.join(config.dataDir, EVENTS_FILE), () => SqliteBlobStore.inLogFile(logFile, { onRelayout })) : await openOwnFile();
  const earlier = logFile && existsSync(ownFile) ? await openOwnFile() : undefined;
  try {
    const large = await openingFile(path.join(config.dataDir, 'blobs'), () => FileBlobStore.open(path.join(config.dataDir, 'blobs')));
    return new TieredBlobStore(small, large, undefined, earlier);
  } catch (error) {
    await Promise.allSettled([small.close(), earlier?.close()]);
    throw error;
  }
}

export async function openStores(config: Config, log?: Logger): Promise<Stores> {
  const opened: { close(): Promise<void> }[] = [];
  const track = <T extends { close(): Promise<void> }>(store: T): T => (opened.push(store), store);
  try {
    const { events, keys, logFile } = track(await openLog(config, log));
    const readStore = track(await openReadStore(config, log));
    const blobs: BlobStore = track(config.mongoUrl ? await GridFsBlobStore.connect(config.mongoUrl, `${config.mongoDb}_blobs`) : await openTieredBlobs(config, logFile, log));
    return {
      events,
      readStore,
      blobs,
      keys,
      async close() {
        await Promise.allSettled([events.close(), readStore.close(), blobs.close(), keys.close()]);
      },
    };
  } catch (error) {
    // A store that opened before another failed would otherwise keep its files or connections open.
    await Promise.allSettled(opened.map((store) => store.close()));
    throw error;
  }
}
