// The embedded event store: one SQLite file in WAL mode. SQLite has a single writer at a time
// (BEGIN IMMEDIATE takes the write lock before the revision is read), so positions are handed out
// in commit order and a reader can never see position n+1 before n: subscriptions need no gap
// detection, across connections and processes alike.

import { randomUUID } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';
import Database from 'better-sqlite3';
import {
  DuplicateEventIdError,
  type AppendResult,
  type EventMetadata,
  type EventPayload,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type StoredEvent,
  type SubscribeOptions,
  type Subscription,
} from './eventStore';
import { zeroWhatIsDeleted } from '../sqliteErasure';
import { WalCheckpoints } from '../walCheckpoints';
import { chainHash, GENESIS_HASH, type ChainLink } from './eventChain';
import { TurnBatcher } from '../turnBatcher';
import { LogAppends, type HostedWrite, type LogWriteItem, type LogWriteOutcome, type SerializedEvent } from './sqliteLogAppends';

// Kept importable from here: the error belongs to the port, which every adapter shares.
export { DuplicateEventIdError };

interface EventRow {
  position: bigint;
  stream_id: string;
  revision: bigint;
  event_id: string;
  type: string;
  data: string;
  metadata: string;
  hash: string | null;
}

/**
 * Tables another store keeps in the log's file (the small blobs: `SqliteBlobStore.inLogFile`), so
 * that its writes and the log's appends of one turn share one transaction and one sync of the WAL.
 */
export interface LogFileTables {
  /** The log's connection (reads, and the rare writes made in place): its integers come back as bigints (`defaultSafeIntegers`). */
  readonly db: Database.Database;
  /**
   * Runs `write` in the transaction of the log's next group commit, before that commit's appends;
   * resolves once the commit is durable. A write that fails fails the whole commit: its appends and
   * the other writes too, and none is stored.
   */
  commitWith(write: HostedWrite): Promise<void>;
  /** Commits what is queued now, and resolves once it is (before a change that must come after it, or a close). */
  flush(): Promise<void>;
}

/** Exported so the append benchmark's raw-insert ceiling writes to the very same table and indexes. */
export const EVENTS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    stream_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    event_id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    metadata TEXT NOT NULL,
    hash TEXT
  );
  CREATE UNIQUE INDEX IF NOT EXISTS events_stream_revision ON events (stream_id, revision);
`;

/** The log's own facts (its identity), apart from the events so readers of the log never see them. */
const META_SCHEMA = `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`;

/** Rows per query when catching up: bounded memory, and no statement stays open across a yield. */
const PAGE_SIZE = 256;
/** Pages kept for the other readers of a turn (pagesThisTurn). */
const PAGES_KEPT_PER_TURN = 4;
/** Rows per query when walking the log for verification. */
const CHAIN_PAGE_SIZE = 2048;
/** Positions a subscription to some types looks through a page: bounded work however rare they are. */
const TYPED_SCAN_WINDOW = 16_384n;
/** How often a live subscription looks for appends made through other connections. */
const POLL_INTERVAL_MS = 50;
/** How soon after another thread's commit (THREAD_ROLES) the readers here look. */
const OTHER_THREADS_WAKE_MS = 5;

export interface SqliteEventStoreOptions {
  /** Told when the file's checkpoint thread cannot start or ends early: the writer checkpoints the file again. */
  onCheckpointFailure?: (error: Error) => void;
}

export class SqliteEventStore implements EventStore {
  private readonly listeners = new Set<() => void>();
  /**
   * Tells this log's readers on the process's other threads (THREAD_ROLES) that a commit added events,
   * and hears theirs: a connection sees another's commits only when it looks, every POLL_INTERVAL_MS
   * otherwise. Other processes still poll.
   */
  private readonly otherThreads: BroadcastChannel;
  private wakeSoon: NodeJS.Timeout | undefined;
  private readonly subscriptions = new Set<SqliteSubscription>();
  private closed = false;

  private readonly selectStreamFrom;
  private readonly selectAfter;
  private readonly selectEventsAfter;
  private readonly selectHeadPosition;
  private readonly selectTypesBetween;
  /** Group commit: the writes asked for during one turn are committed together at its end. */
  private readonly writes: TurnBatcher<LogWriteItem, Exclude<LogWriteOutcome, Error>>;
  private readonly storeIdentity: string;
  /**
   * The pages read since this turn of the event loop began, by the position they start after: the
   * subscriptions woken by one commit (the projections', each saga's) ask for the same page in the
   * same turn, and read it once. Rows, not events: each reader parses its own, as it may keep or
   * change them. Emptied by every commit here and at the next turn, so a reader waiting for what
   * comes next never gets the page it already had.
   */
  private readonly pagesThisTurn = new Map<Position, Omit<EventRow, 'hash'>[]>();
  /** The file's checkpoints, off the serving thread once it has taken a few commits (none in memory). */
  readonly checkpoints: WalCheckpoints | undefined;

  private constructor(
    private readonly db: Database.Database,
    file: string,
    options: SqliteEventStoreOptions,
  ) {
    // Every INTEGER comes back as a bigint, so positions past 2^53 stay exact.
    db.defaultSafeIntegers(true);
    db.exec(EVENTS_SCHEMA);
    db.exec(META_SCHEMA);
    this.storeIdentity = this.ensureIdentity();
    this.ensureChain();
    this.otherThreads = new BroadcastChannel(`edge-ml-log:${this.storeIdentity}`);
    // A message wakes the readers here as a commit of this connection's own does, at most every
    // OTHER_THREADS_WAKE_MS: under a device's load the other thread's readers (the projections) then
    // take a few commits a batch, not one.
    this.otherThreads.onmessage = () => {
      if (this.wakeSoon) return;
      this.wakeSoon = setTimeout(() => ((this.wakeSoon = undefined), this.appended()), OTHER_THREADS_WAKE_MS);
    };
    // Listening keeps no process alive.
    this.otherThreads.unref();
    // LIMIT -1: no limit.
    this.selectStreamFrom = db.prepare<[string, bigint, number], EventRow>(
      'SELECT * FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision LIMIT ?',
    );
    this.selectAfter = db.prepare<[bigint, number], EventRow>(
      'SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?',
    );
    // A reader's page: the columns of a StoredEvent, not the chain's hash (a string per event for nothing).
    this.selectEventsAfter = db.prepare<[bigint, number], Omit<EventRow, 'hash'>>(
      'SELECT position, stream_id, revision, event_id, type, data, metadata FROM events WHERE position > ? ORDER BY position LIMIT ?',
    );
    this.selectHeadPosition = db.prepare<[], { position: bigint | null }>('SELECT MAX(position) AS position FROM events');
    this.selectTypesBetween = db.prepare<[bigint, bigint, string, number], Omit<EventRow, 'hash'>>(
      `SELECT position, stream_id, revision, event_id, type, data, metadata FROM events
       WHERE position > ? AND position <= ? AND type IN (SELECT value FROM json_each(?)) ORDER BY position LIMIT ?`,
    );
    const appends = new LogAppends(db);
    this.checkpoints = file === ':memory:' || file === '' ? undefined : new WalCheckpoints(db, file, { onFailure: options.onCheckpointFailure });
    this.writes = new TurnBatcher((batch) => {
      const outcomes = appends.commit(batch);
      this.checkpoints?.committed();
      // Writes alone (undefined) give the log's readers nothing new.
      if (outcomes.some((o) => o !== undefined && !(o instanceof Error))) this.committed();
      return outcomes;
    });
  }

  /** Opens (creating when needed) the store in `file`; `:memory:` gives a private in-memory store. */
  static open(file: string, options: SqliteEventStoreOptions = {}): SqliteEventStore {
    const db = new Database(file);
    try {
      db.pragma('journal_mode = WAL');
      // FULL syncs the WAL on every commit: an acknowledged append survives a power cut.
      db.pragma('synchronous = FULL');
      // Appends committed together each run in a savepoint, whose journal is then kept in memory.
      db.pragma('temp_store = MEMORY');
      // The log's events are never deleted; a deleted small blob (LogFileTables) is zeroed where it lay.
      zeroWhatIsDeleted(db);
      return new SqliteEventStore(db, file, options);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** Made once per file; INSERT OR IGNORE makes two processes opening a new file at once agree. */
  private ensureIdentity(): string {
    this.db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('identity', ?)").run(randomUUID());
    const row = this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'identity'").get();
    if (!row) throw new Error('The event store has no identity right after making one');
    return row.value;
  }

  async identity(): Promise<string> {
    return this.storeIdentity;
  }

  /**
   * Logs written before events were chained get their hashes once, at the first open by a version
   * that chains: in one write transaction, so a second process opening the file at once waits and
   * then finds nothing left to do. The hashes cover the rows as they are at that moment.
   */
  private ensureChain(): void {
    const columns = this.db.prepare<[], { name: string }>('PRAGMA table_info(events)').all();
    if (!columns.some((c) => c.name === 'hash')) {
      try {
        this.db.exec('ALTER TABLE events ADD COLUMN hash TEXT');
      } catch (error) {
        // Another process added it between the look and the change.
        if (!(error instanceof Database.SqliteError && /duplicate column/.test(error.message))) throw error;
      }
    }
    // Marked once done, so that later opens of a large log do not look through it again.
    const done = this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'chained'");
    if (done.get()) return;
    const page = this.db.prepare<[bigint], EventRow>('SELECT * FROM events WHERE hash IS NULL AND position > ? ORDER BY position LIMIT 1000');
    const previousOf = this.db.prepare<[string, bigint], { hash: string | null }>('SELECT hash FROM events WHERE stream_id = ? AND revision = ?');
    const setHash = this.db.prepare<[string, bigint], unknown>('UPDATE events SET hash = ? WHERE position = ?');
    this.db
      .transaction(() => {
        // Position order: a row's predecessor in its stream is stored (and hashed) before it.
        for (let after = 0n, rows = page.all(after); rows.length > 0; rows = page.all(after)) {
          for (const row of rows) {
            const previous = row.revision === 0n ? GENESIS_HASH : previousOf.get(row.stream_id, row.revision - 1n)?.hash;
            if (typeof previous !== 'string') throw new Error(`Stream ${row.stream_id}: revision ${row.revision} has no predecessor to chain to`);
            const fields = { streamId: row.stream_id, revision: row.revision, id: row.event_id, type: row.type, data: row.data, metadata: row.metadata };
            setHash.run(chainHash(previous, fields), row.position);
            after = row.position;
          }
        }
        this.db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('chained', 'sha256')").run();
      })
      .immediate();
  }

  /** The durability settings of this connection (synchronous is per connection, not per file). */
  durability(): { journalMode: string; synchronous: number } {
    return {
      journalMode: String(this.db.pragma('journal_mode', { simple: true })),
      synchronous: Number(this.db.pragma('synchronous', { simple: true })),
    };
  }

  async appendToStream(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new Error(`Stream ${streamId}: an append needs at least one event`);
    if (this.closed) throw new Error('The event store is closed');
    // The JSON texts the chain hashes and the log stores.
    const serialized = events.map((e): SerializedEvent => ({ id: e.id, type: e.type, data: JSON.stringify(e.data), metadata: JSON.stringify(e.metadata) }));
    return this.writes.submit({ streamId, events: serialized, expected }) as Promise<AppendResult>;
  }

  /** The log's file, for the tables of a store whose writes join the log's group commits. */
  tables(): LogFileTables {
    return {
      db: this.db,
      commitWith: (write) => (this.closed ? Promise.reject(new Error('The event store is closed')) : this.writes.submit(write).then(() => undefined)),
      flush: async () => this.writes.flush(),
    };
  }

  /** A commit stored events: this store's readers look, and those of the process's other threads. */
  private committed(): void {
    this.appended();
    this.otherThreads.postMessage(null);
  }

  /** Events were committed (by this connection, or another thread's): the readers look. */
  private appended(): void {
    if (this.closed) return;
    this.pagesThisTurn.clear();
    for (const listener of [...this.listeners]) listener();
  }

  async readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]> {
    if (options?.maxCount !== undefined && options.maxCount <= 0) return [];
    return this.selectStreamFrom.all(streamId, options?.fromRevision ?? 0n, options?.maxCount ?? -1).map(toStoredEvent);
  }

  async *readAll(options?: ReadAllOptions): AsyncGenerator<StoredEvent> {
    let after = options?.after ?? 0n; // AUTOINCREMENT positions start at 1
    let remaining = options?.maxCount ?? Number.POSITIVE_INFINITY;
    while (remaining > 0) {
      const limit = Math.min(PAGE_SIZE, remaining);
      const page = this.selectEventsAfter.all(after, limit);
      for (const row of page) {
        const event = toStoredEvent(row);
        after = event.position;
        remaining -= 1;
        yield event;
      }
      if (page.length < limit) return;
    }
  }

  async *readChain(options?: ReadAllOptions): AsyncGenerator<readonly ChainLink[]> {
    let after = options?.after ?? 0n;
    let remaining = options?.maxCount ?? Number.POSITIVE_INFINITY;
    while (remaining > 0) {
      // Larger pages than a subscription's: a walk over the whole log is read-bound.
      const limit = Math.min(CHAIN_PAGE_SIZE, remaining);
      const rows = this.selectAfter.all(after, limit);
      if (rows.length > 0) {
        after = rows.at(-1)!.position;
        remaining -= rows.length;
        yield rows.map((row) => ({
          streamId: row.stream_id,
          revision: row.revision,
          position: row.position,
          id: row.event_id,
          type: row.type,
          data: row.data,
          metadata: row.metadata,
          hash: row.hash ?? undefined,
        }));
      }
      if (rows.length < limit) return;
    }
  }

  subscribeToAll(options?: SubscribeOptions): Subscription {
    if (this.closed) throw new Error('The event store is closed');
    // The types as the JSON array the page's query reads (json_each), made once.
    const typesJson = options?.types === undefined ? undefined : JSON.stringify([...options.types]);
    const subscription = new SqliteSubscription(
      options?.after ?? 0n,
      (after) => (typesJson === undefined ? this.everyEventAfter(after) : this.typesAfter(after, typesJson)),
      (listener) => {
        this.listeners.add(listener);
        return () => this.listeners.delete(listener);
      },
      () => this.subscriptions.delete(subscription),
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  private everyEventAfter(after: Position): Page {
    const rows = this.pageAfter(after);
    return { events: rows.map(toStoredEvent), through: rows.at(-1)?.position ?? after, more: rows.length === PAGE_SIZE };
  }

  /**
   * The events of the types in `typesJson` (a JSON array) after `after`, looked for in a window of
   * positions up to the head, so that a page's work is bounded however rare they are. The rows of the
   * other types are passed over in SQLite: never parsed, never handed to JavaScript. The head is read
   * first: positions are handed out in commit order, so every row up to it is there to be read.
   */
  private typesAfter(after: Position, typesJson: string): Page {
    const head = this.selectHeadPosition.get()?.position ?? 0n;
    if (head <= after) return { events: [], through: after, more: false };
    const end = head - after > TYPED_SCAN_WINDOW ? after + TYPED_SCAN_WINDOW : head;
    const rows = this.selectTypesBetween.all(after, end, typesJson, PAGE_SIZE);
    const full = rows.length === PAGE_SIZE;
    return { events: rows.map(toStoredEvent), through: full ? rows.at(-1)!.position : end, more: full || end < head };
  }

  private pageAfter(after: Position): Omit<EventRow, 'hash'>[] {
    let rows = this.pagesThisTurn.get(after);
    if (!rows) {
      rows = this.selectEventsAfter.all(after, PAGE_SIZE);
      if (this.pagesThisTurn.size === 0) setImmediate(() => this.pagesThisTurn.clear());
      // A reader catching up may go through many pages in one turn: only the last few are kept.
      else if (this.pagesThisTurn.size >= PAGES_KEPT_PER_TURN) this.pagesThisTurn.delete(this.pagesThisTurn.keys().next().value!);
      this.pagesThisTurn.set(after, rows);
    }
    return rows;
  }

  async headPosition(): Promise<Position | undefined> {
    return this.selectHeadPosition.get()?.position ?? undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Appends already accepted are committed, not dropped.
    this.writes.flush();
    this.otherThreads.close();
    clearTimeout(this.wakeSoon);
    // Subscriptions first: they must not read from a closed connection.
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.checkpoints?.stop();
    this.db.close();
  }
}

/** A subscription's page: its events, the last position it looked at, and whether more are there to read now. */
interface Page {
  events: StoredEvent[];
  through: Position;
  more: boolean;
}

/**
 * Catches up page by page from the table, then waits for a wake-up: an append through the same
 * store (immediate) or the poll timer (appends by other connections). Each page starts strictly
 * after the last yielded position, so nothing is skipped or repeated.
 */
class SqliteSubscription implements Subscription {
  private closed = false;
  private started = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly after: Position,
    private readonly readPage: (after: Position) => Page,
    private readonly onAppend: (listener: () => void) => () => void,
    private readonly onEnd: () => void,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<StoredEvent> {
    // One cursor per subscription: a second reader would silently share or split the events.
    if (this.started) throw new Error('A subscription can be iterated only once');
    this.started = true;
    return this.run();
  }

  async close(): Promise<void> {
    this.closed = true;
    // Ends a pending next() now rather than at the next poll.
    this.wake?.();
    this.onEnd();
  }

  private async *run(): AsyncGenerator<StoredEvent> {
    let after = this.after;
    try {
      while (!this.closed) {
        const page = this.readPage(after);
        for (const event of page.events) {
          if (this.closed) return;
          yield event;
          after = event.position;
        }
        after = page.through;
        if (this.closed) return;
        if (!page.more) await this.changed();
        // Pages of events left out (a subscription to some types) yield nothing: the loop lets the others run.
        else if (page.events.length === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      // A consumer that breaks out of `for await` ends the subscription too.
      this.closed = true;
      this.onEnd();
    }
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        stopListening();
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, POLL_INTERVAL_MS);
      const stopListening = this.onAppend(done);
      this.wake = done;
    });
  }
}

function toStoredEvent(row: Omit<EventRow, 'hash'>): StoredEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    revision: row.revision,
    position: row.position,
    type: row.type,
    data: JSON.parse(row.data) as EventPayload,
    metadata: JSON.parse(row.metadata) as EventMetadata,
  };
}
