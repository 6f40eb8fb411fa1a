// The log's writes on one SQLite connection: a group commit's appends (each in a savepoint, checked
// against its expected revision, chained) and the writes of the tables other stores keep in the
// log's file. Its inputs are plain data (a hosted write is a statement and its parameters, not a
// closure), so that a writer of its own could run it on another connection (a thread:
// docs/ingestion-path.md, measured and not landed).

import Database from 'better-sqlite3';
import { DuplicateEventIdError, WrongExpectedRevisionError, type AppendResult, type ExpectedRevision, type Revision } from './eventStore';
import { chainHash, GENESIS_HASH } from './eventChain';
import { Statements } from '../readstore/sqlite/statements';

/** An event as the log writes it: its data and metadata already the JSON texts the chain hashes. */
export interface SerializedEvent {
  id: string;
  type: string;
  data: string;
  metadata: string;
}

export interface AppendItem {
  streamId: string;
  events: readonly SerializedEvent[];
  expected: ExpectedRevision;
}

/**
 * A write of another store's table in the log's file, made in a group commit's transaction before its
 * appends (an event appended with it may name what it holds). A statement and its parameters, not a
 * closure, so that a writer elsewhere (a thread) could run it.
 */
export interface HostedWrite {
  sql: string;
  params: readonly unknown[];
}

export type LogWriteItem = AppendItem | HostedWrite;
export const isHostedWrite = (item: LogWriteItem): item is HostedWrite => 'sql' in item;

/** An item's own outcome: an append's result, nothing for a hosted write, or the error that failed it alone. */
export type LogWriteOutcome = AppendResult | undefined | Error;

interface StoredRef {
  position: bigint;
  stream_id: string;
  revision: bigint;
  event_id: string;
}

export class LogAppends {
  private readonly selectById;
  private readonly selectStreamSlice;
  private readonly selectHeadRevision;
  private readonly insert;
  private readonly appendTx;
  private readonly batchTx;
  /** The hosted writes' statements, kept prepared by their text (one kind today: a small blob's insert). */
  private readonly hosted: Statements;

  /** `db` answers integers as bigints (`defaultSafeIntegers`), and holds the log's tables. */
  constructor(db: Database.Database) {
    this.hosted = new Statements(db);
    this.selectById = db.prepare<[string], StoredRef>('SELECT position, stream_id, revision, event_id FROM events WHERE event_id = ?');
    this.selectStreamSlice = db.prepare<[string, bigint, number], StoredRef>(
      `SELECT position, stream_id, revision, event_id FROM events
       WHERE stream_id = ? AND revision >= ? ORDER BY revision LIMIT ?`,
    );
    this.selectHeadRevision = db.prepare<[string], { revision: bigint; hash: string | null }>(
      'SELECT revision, hash FROM events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1',
    );
    this.insert = db.prepare<[string, bigint, string, string, string, string, string], { position: bigint }>(
      `INSERT INTO events (stream_id, revision, event_id, type, data, metadata, hash)
       VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING position`,
    );
    this.appendTx = db.transaction(
      (streamId: string, events: readonly SerializedEvent[], expected: ExpectedRevision, fresh: boolean): AppendResult =>
        fresh ? this.insertFrom(streamId, -1n, GENESIS_HASH, events) : this.appendChecked(streamId, events, expected),
    );
    this.batchTx = db.transaction((batch: readonly LogWriteItem[]) => {
      for (const item of batch) if (isHostedWrite(item)) this.hosted.prepare(item.sql).run(...item.params);
      return batch.map((item) => (isHostedWrite(item) ? undefined : this.appendOne(item)));
    });
  }

  /**
   * One group commit: every item in one transaction, so one WAL sync makes them all durable. Each
   * append runs in its own savepoint: a wrong expected revision fails that append alone. A failure of
   * the commit itself (a hosted write's, the disk's) throws, and none is stored.
   */
  commit(batch: readonly LogWriteItem[]): LogWriteOutcome[] {
    // IMMEDIATE takes the write lock before any revision is read, so a writer in another process
    // cannot slip in between a check and its insert. An append alone needs no savepoint: its
    // failure rolls back the whole (its own) transaction.
    const [only] = batch;
    return batch.length === 1 && !isHostedWrite(only!) ? [this.appendOne(only!, true)] : this.batchTx.immediate(batch);
  }

  /**
   * One append, inside the batch's transaction (a savepoint) or `alone` in its own; its own failure is
   * its answer, a storage failure ends the batch.
   */
  private appendOne(append: AppendItem, alone = false): AppendResult | Error {
    const run = alone ? this.appendTx.immediate : this.appendTx;
    try {
      if (append.expected === 'no_stream') {
        // The devices' path among others (a sample's stream is named by an id just allocated):
        // inserted without reading first. The unique indexes refuse it when the stream exists or an id
        // is stored; it is then rolled back and takes the checked path, which tells a retry from a
        // conflict. Two lookups fewer per new stream.
        try {
          return run(append.streamId, append.events, append.expected, true);
        } catch (error) {
          if (!(error instanceof Database.SqliteError && error.code === 'SQLITE_CONSTRAINT_UNIQUE')) throw error;
        }
      }
      return run(append.streamId, append.events, append.expected, false);
    } catch (error) {
      const duplicate = this.duplicateIdError(error, append.streamId, append.events);
      if (duplicate) return duplicate;
      if (error instanceof Database.SqliteError) throw error;
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  private appendChecked(streamId: string, events: readonly SerializedEvent[], expected: ExpectedRevision): AppendResult {
    const retried = this.previousAppend(streamId, events);
    if (retried) return retried;

    const headRow = this.selectHeadRevision.get(streamId);
    const head = headRow?.revision;
    const actual: Revision | 'no_stream' = head ?? 'no_stream';
    const holds =
      expected === 'any' ||
      (expected === 'no_stream' && head === undefined) ||
      (expected === 'stream_exists' && head !== undefined) ||
      (typeof expected === 'bigint' && head === expected);
    if (!holds) throw new WrongExpectedRevisionError(streamId, expected, actual);
    if (headRow && headRow.hash === null) throw new Error(`Stream ${streamId}: revision ${headRow.revision} has no chain hash`);
    return this.insertFrom(streamId, head ?? -1n, headRow?.hash ?? GENESIS_HASH, events);
  }

  /** Inserts `events` after revision `head` of the stream, chained to `previous` (the head's hash). */
  private insertFrom(streamId: string, head: Revision, previous: string, events: readonly SerializedEvent[]): AppendResult {
    let revision = head;
    let position = 0n;
    for (const event of events) {
      revision += 1n;
      previous = chainHash(previous, { streamId, revision, id: event.id, type: event.type, data: event.data, metadata: event.metadata });
      const row = this.insert.get(streamId, revision, event.id, event.type, event.data, event.metadata, previous);
      if (!row) throw new Error('INSERT ... RETURNING returned no row');
      position = row.position;
    }
    return { nextExpectedRevision: revision, position };
  }

  /**
   * Idempotent retry: when the batch's first id is already in this stream and the whole batch
   * matches the stored events in order, the append already happened; answer what it answered
   * then, whatever the expected revision now says.
   */
  private previousAppend(streamId: string, events: readonly SerializedEvent[]): AppendResult | undefined {
    const first = events[0];
    if (!first) return undefined;
    const stored = this.selectById.get(first.id);
    if (!stored) return undefined;
    if (stored.stream_id !== streamId) throw new DuplicateEventIdError(streamId, first.id);
    const rows = this.selectStreamSlice.all(streamId, stored.revision, events.length);
    const same = rows.length === events.length && rows.every((row, i) => row.event_id === events[i]?.id);
    const last = rows.at(-1);
    if (!same || !last) throw new DuplicateEventIdError(streamId, first.id);
    return { nextExpectedRevision: last.revision, position: last.position };
  }

  /** A later id of the batch that is already stored trips the UNIQUE constraint: say which. */
  private duplicateIdError(error: unknown, streamId: string, events: readonly SerializedEvent[]): DuplicateEventIdError | undefined {
    if (!(error instanceof Database.SqliteError) || error.code !== 'SQLITE_CONSTRAINT_UNIQUE') return undefined;
    if (!error.message.includes('events.event_id')) return undefined;
    const taken =
      events.find((e) => this.selectById.get(e.id) !== undefined) ??
      events.find((e, i) => events.findIndex((other) => other.id === e.id) !== i);
    return new DuplicateEventIdError(streamId, taken?.id ?? '?');
  }
}
