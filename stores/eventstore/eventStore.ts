// The event store port. Every adapter (embedded SQLite, EventStoreDB) passes the same contract
// suite (test/stores/eventStore.contract.ts); nothing above this file knows which one runs.

/** A position in the whole log. Strictly increasing in commit order; compared as a bigint. */
export type Position = bigint;

/** A stream's revision: 0n for its first event. */
export type Revision = bigint;

/**
 * What the caller believes about the stream before appending:
 * - `no_stream`: the stream must not exist (creation, uniqueness reservations);
 * - `stream_exists`: it must exist, at any revision;
 * - `any`: no check;
 * - a revision: the stream's last event must be at exactly this revision.
 */
export type ExpectedRevision = 'no_stream' | 'stream_exists' | 'any' | Revision;

export interface EventMetadata {
  /** Who caused it: `user:<id>`, `apikey:<id>` or `system:<component>`. */
  actor: string;
  /** The HTTP request id (or the saga run) the event belongs to. */
  correlationId: string;
  /** The command or event that caused this one. */
  causationId?: string;
  /** ISO 8601 time at which the command was decided. */
  time: string;
}

export type EventPayload = Record<string, unknown>;

export interface NewEvent<Type extends string = string, Data extends EventPayload = EventPayload> {
  /** A UUID. An append retried with the same ids is stored once (idempotent retry). */
  id: string;
  type: Type;
  data: Data;
  metadata: EventMetadata;
}

export interface StoredEvent<Type extends string = string, Data extends EventPayload = EventPayload>
  extends NewEvent<Type, Data> {
  streamId: string;
  revision: Revision;
  position: Position;
}

export interface AppendResult {
  /** Revision of the last event now in the stream: the expected revision for the next append. */
  nextExpectedRevision: Revision;
  /** Position of the last appended event in the whole log: what read-your-writes waits for. */
  position: Position;
}

export interface ReadAllOptions {
  /** Only events strictly after this position; from the start of the log when absent. */
  after?: Position;
  maxCount?: number;
}

/**
 * A live subscription to the whole log. Iterating yields every event after the starting
 * position in log order: first the history (catch-up), then new events as they are appended.
 * Closing ends the iteration.
 */
export interface Subscription extends AsyncIterable<StoredEvent> {
  close(): Promise<void>;
}

export interface EventStore {
  /** Appends atomically: all events or none. Throws WrongExpectedRevisionError on a conflict. */
  appendToStream(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  /** The stream's events in order; an empty array when the stream does not exist. */
  readStream(streamId: string, options?: { fromRevision?: Revision }): Promise<StoredEvent[]>;
  /** The whole log in order (our events only, never the store's own system events). */
  readAll(options?: ReadAllOptions): AsyncIterable<StoredEvent>;
  subscribeToAll(options?: { after?: Position }): Subscription;
  /** Position of the last event in the log, or undefined when it is empty. */
  headPosition(): Promise<Position | undefined>;
  close(): Promise<void>;
}

/** Raised by every adapter when the expected revision does not hold. */
export class WrongExpectedRevisionError extends Error {
  readonly code = 'WRONG_EXPECTED_REVISION';
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    /** The stream's actual last revision, or `no_stream` when it does not exist. */
    readonly actual: Revision | 'no_stream',
  ) {
    super(`Stream ${streamId}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}
