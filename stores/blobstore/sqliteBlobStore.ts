// Small blobs in SQLite (WAL, synchronous=FULL), appended in rowid order. A file per blob costs about ten file
// system calls and two fsyncs per sample; here the puts made in one turn of the event loop share
// one transaction and one WAL sync, as the event store's appends do. In the embedded default the
// tables are in the log's own file (`inLogFile`) and the puts join the log's group commit: a turn's
// new blobs and its events (those of the samples whose blobs came the turn before) take one sync,
// not one per file. A put resolves once its transaction is committed, so the blob is durable before
// the sample is acknowledged.
import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import Database from 'better-sqlite3';
import { truncateWal, zeroWhatIsDeleted } from '../sqliteErasure';
import { TurnBatcher } from '../turnBatcher';
import type { LogFileTables } from '../eventstore/sqliteEventStore';
import { chunksOf } from './fileBlobStore';
import { BlobNotFoundError, BlobTooLargeError, type BlobInfo, type BlobSource, type BlobStore } from './blobStore';

const SHA256 = /^[0-9a-f]{64}$/;
/** A put's statement; in the log's file it is run by whoever commits the log's writes (LogFileTables). */
const INSERT_BLOB = 'INSERT OR IGNORE INTO blobs (sha256, size, data) VALUES (?, ?, ?)';

interface QueuedPut {
  sha256: string;
  bytes: Uint8Array;
}

/** How long a write waits for another process's lock. */
const BUSY_TIMEOUT_MS = 5000;
/** How long the layout's change waits for another process's: copying every blob takes a while. */
const LAYOUT_BUSY_TIMEOUT_MS = 10 * 60 * 1000;

/**
 * Rows in insertion order (rowid), found by a unique index on the SHA-256. Keyed by the SHA-256
 * itself (WITHOUT ROWID, the layout before), every blob went into a random leaf of a B-tree of whole
 * rows: each put rewrote a page of other blobs into the WAL, three times the CPU and twice the bytes
 * of an append to the table's last page and a small entry in the index.
 */
const TABLES = {
  blobs: 'CREATE TABLE blobs (id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE, size INTEGER NOT NULL, data BLOB NOT NULL)',
  quarantine: 'CREATE TABLE quarantine (id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE, size INTEGER NOT NULL, data BLOB NOT NULL)',
} as const;

/**
 * Creates the tables, or copies those of the layout before into the current one. Several processes
 * open the file at once (split roles): the first to take the write lock does it, the others then find
 * it done.
 */
function layOut(db: Database.Database, onRelayout: (() => void) | undefined): void {
  const tableSql = db.prepare<[string], string>(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`).pluck();
  const current = (name: keyof typeof TABLES) => tableSql.get(name) === TABLES[name];
  if (current('blobs') && current('quarantine')) return;
  db.pragma(`busy_timeout = ${LAYOUT_BUSY_TIMEOUT_MS}`);
  try {
    db.transaction(() => {
      for (const name of Object.keys(TABLES) as (keyof typeof TABLES)[]) {
        const existing = tableSql.get(name);
        if (existing === TABLES[name]) continue;
        if (existing === undefined) {
          db.exec(TABLES[name]);
          continue;
        }
        if (name === 'blobs') onRelayout?.();
        db.exec(`ALTER TABLE ${name} RENAME TO ${name}_before`);
        db.exec(TABLES[name]);
        db.exec(`INSERT INTO ${name} (sha256, size, data) SELECT sha256, size, data FROM ${name}_before`);
        db.exec(`DROP TABLE ${name}_before`);
      }
    }).immediate();
    // The copy went through the write-ahead log, which would otherwise keep its size (every blob) on disk.
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
}

export class SqliteBlobStore implements BlobStore {
  private readonly insert;
  private readonly selectData;
  private readonly selectSize;
  private readonly selectOne;
  private readonly remove;
  private readonly insertAll;
  private readonly toQuarantine;
  private readonly fromQuarantine;
  private readonly inQuarantine;
  private readonly purgeQuarantined;
  /** The puts made in one turn share one transaction; a failure fails them all, storing none. */
  private readonly puts: { submit(put: QueuedPut): Promise<void>; flush(): Promise<void> };
  private closed = false;

  /** `log`: the tables are in the log's file, and the puts are committed with its appends. */
  private constructor(
    private readonly db: Database.Database,
    onRelayout: (() => void) | undefined,
    private readonly log?: LogFileTables,
  ) {
    layOut(db, onRelayout);
    // The log's connection answers integers as bigints; a blob's size is a number.
    const prepare = <P extends unknown[], R>(sql: string) => db.prepare<P, R>(sql).safeIntegers(false);
    const move = (from: string, to: string) =>
      db.transaction((sha256: string): number => {
        db.prepare(`INSERT OR IGNORE INTO ${to} (sha256, size, data) SELECT sha256, size, data FROM ${from} WHERE sha256 = ?`).run(sha256);
        return db.prepare(`DELETE FROM ${from} WHERE sha256 = ?`).run(sha256).changes;
      });
    this.toQuarantine = move('blobs', 'quarantine');
    this.fromQuarantine = move('quarantine', 'blobs');
    this.inQuarantine = prepare<[string], { one: number }>('SELECT 1 AS one FROM quarantine WHERE sha256 = ?');
    this.purgeQuarantined = db.prepare<[string]>('DELETE FROM quarantine WHERE sha256 = ?');
    this.insert = db.prepare<[string, number, Uint8Array]>(INSERT_BLOB);
    this.selectData = prepare<[string], { data: Buffer }>('SELECT data FROM blobs WHERE sha256 = ?');
    this.selectSize = prepare<[string], { size: number }>('SELECT size FROM blobs WHERE sha256 = ?');
    // Answered from the index alone.
    this.selectOne = prepare<[string], { one: number }>('SELECT 1 AS one FROM blobs WHERE sha256 = ?');
    this.remove = db.prepare<[string]>('DELETE FROM blobs WHERE sha256 = ?');
    this.insertAll = db.transaction((puts: readonly QueuedPut[]) => {
      for (const put of puts) this.insert.run(put.sha256, put.bytes.byteLength, put.bytes);
    });
    if (log) {
      this.puts = { submit: (put) => log.commitWith({ sql: INSERT_BLOB, params: [put.sha256, put.bytes.byteLength, put.bytes] }), flush: () => log.flush() };
    } else {
      const batcher = new TurnBatcher<QueuedPut, undefined>((batch) => {
        this.insertAll.immediate(batch);
        return batch.map(() => undefined);
      });
      this.puts = { submit: (put) => batcher.submit(put), flush: async () => batcher.flush() };
    }
  }

  /**
   * The tables in the log's file (its connection, with secure_delete on: a deleted blob is zeroed
   * where it lay), the puts made in the log's group commits. The log owns the connection: closing
   * this store commits its queued puts and leaves the connection open.
   */
  static inLogFile(log: LogFileTables, options: { onRelayout?: () => void } = {}): SqliteBlobStore {
    return new SqliteBlobStore(log.db, options.onRelayout, log);
  }

  /** `onRelayout` is told when a file of an older layout is laid out anew, before this answers (once, after an upgrade). */
  static open(file: string, options: { onRelayout?: () => void } = {}): SqliteBlobStore {
    const db = new Database(file);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      // A removed photo or sample is zeroed where it lay, not left in free pages (appends cost nothing more).
      zeroWhatIsDeleted(db);
      return new SqliteBlobStore(db, options.onRelayout);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  async put(source: BlobSource, options: { maxBytes?: number } = {}): Promise<BlobInfo> {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of chunksOf(source)) {
      size += chunk.byteLength;
      if (options.maxBytes !== undefined && size > options.maxBytes) throw new BlobTooLargeError(options.maxBytes);
      chunks.push(chunk);
    }
    const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    if (this.selectOne.get(sha256) === undefined) await this.commit(sha256, bytes);
    return { sha256, size };
  }

  async putFile(path: string, known: BlobInfo): Promise<BlobInfo> {
    const bytes = await readFile(path);
    if (bytes.length !== known.size) throw new Error(`${path} is not ${known.size} bytes long`);
    const info = await this.put(bytes);
    if (info.sha256 !== known.sha256) throw new Error(`${path} does not have SHA-256 ${known.sha256}`);
    await rm(path, { force: true });
    return info;
  }

  private commit(sha256: string, bytes: Uint8Array): Promise<void> {
    if (this.closed) return Promise.reject(new Error('The blob store is closed'));
    return this.puts.submit({ sha256, bytes });
  }

  /** Whether this store holds the blob (a synchronous index lookup). */
  has(sha256: string): boolean {
    return SHA256.test(sha256) && this.selectOne.get(sha256) !== undefined;
  }

  async open(sha256: string): Promise<Readable> {
    const row = SHA256.test(sha256) ? this.selectData.get(sha256) : undefined;
    if (!row) throw new BlobNotFoundError(sha256);
    return Readable.from([row.data]);
  }

  async stat(sha256: string): Promise<BlobInfo | undefined> {
    const row = SHA256.test(sha256) ? this.selectSize.get(sha256) : undefined;
    return row ? { sha256, size: row.size } : undefined;
  }

  /** A single removal (a user's photo): the write-ahead log's earlier copies of the blob go with it. */
  async delete(sha256: string): Promise<boolean> {
    if (!SHA256.test(sha256)) return false;
    if (this.remove.run(sha256).changes === 0) return false;
    await truncateWal(this.db);
    return true;
  }

  async quarantine(sha256: string): Promise<boolean> {
    if (!SHA256.test(sha256)) return false;
    // Puts still queued land first, so none of them comes back after the move.
    await this.puts.flush();
    return this.toQuarantine.immediate(sha256) > 0 || this.inQuarantine.get(sha256) !== undefined;
  }

  async restore(sha256: string): Promise<void> {
    // INSERT OR IGNORE: content put afresh meanwhile stays as it is; the set-aside copy goes.
    if (SHA256.test(sha256)) this.fromQuarantine.immediate(sha256);
  }

  async purge(sha256: string): Promise<void> {
    if (SHA256.test(sha256)) this.purgeQuarantined.run(sha256);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.puts.flush();
    if (!this.log) this.db.close();
  }
}
