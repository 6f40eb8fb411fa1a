// The event store port. Every adapter (embedded SQLite, EventStoreDB) passes the same contract
// suite (test/stores/eventStore.contract.ts); nothing above this file knows which one runs.

import { DomainError } from '../../domain/shared/errors';
import type { ChainLink } from './eventChain';

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
  /** A UUID. An append retried with the same ids is stored once (see `EventStore.appendToStream`). */
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

export interface ReadStreamOptions {
  /** From this revision on (inclusive); from the stream's first event when absent. */
  fromRevision?: Revision;
  maxCount?: number;
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
  /**
   * Appends atomically: all events or none. Throws WrongExpectedRevisionError on a conflict.
   *
   * Repeated event ids, the same on every adapter:
   * - a retry (the batch's ids are already stored in this stream, consecutively and in this order)
   *   stores nothing and answers what the first append answered (the revision and position of the
   *   batch's last event), whatever the expected revision says now: the same, a stale one, the
   *   stream's current one, `any` or `stream_exists`. A command re-sent by a saga is kept once.
   * - ids that match a stored append only in part, or repeat within the batch, are refused with
   *   DuplicateEventIdError and nothing is stored.
   * The EventStoreDB adapter looks for a retry among the last RETRY_WINDOW events of the stream
   * (SQLite: anywhere); ids reused in another stream are refused by SQLite only.
   */
  appendToStream(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  /**
   * The stream's events in order; an empty array when the stream does not exist. `maxCount` reads
   * a page of at most that many, so a long stream (a job's output) can be read without holding it
   * whole; the next page starts at the last revision read plus one.
   */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]>;
  /** The whole log in order (our events only, never the store's own system events). */
  readAll(options?: ReadAllOptions): AsyncIterable<StoredEvent>;
  subscribeToAll(options?: SubscribeOptions): Subscription;
  /**
   * The whole log as stored, for verification (eventChain.ts): each event's stored texts and chain
   * hash, in log order, in pages (a walk over millions of events pays per page, not per event).
   * Sealed fields stay sealed.
   */
  readChain(options?: ReadAllOptions): AsyncIterable<readonly ChainLink[]>;
  /** Position of the last event in the log, or undefined when it is empty. */
  headPosition(): Promise<Position | undefined>;
  /**
   * A UUID made once per log: positions mean something only in the log that gave them, so a
   * checkpoint is stored with this and refused by a store with another identity.
   */
  identity(): Promise<string>;
  close(): Promise<void>;
}

export interface SubscribeOptions {
  /** Strictly after this position; from the start of the log when unset. */
  after?: Position;
  /**
   * Only events of these types. The others are read past without being handed over (the embedded
   * log does not even parse them): a reader that wants a few kinds among every sample's events pays
   * for those few.
   */
  types?: ReadonlySet<string>;
}

/** The events of `types` among a subscription's, for an adapter that cannot leave the others out where it reads. */
export function onlyTypes(subscription: Subscription, types: ReadonlySet<string> | undefined): Subscription {
  if (types === undefined) return subscription;
  return {
    close: () => subscription.close(),
    async *[Symbol.asyncIterator]() {
      for await (const event of subscription) if (types.has(event.type)) yield event;
    },
  };
}

/**
 * How many of a stream's last events an adapter without an id index (EventStoreDB) searches for a
 * retried append. A saga re-sends its command right after seeing its event again, so the first
 * append is among the stream's most recent events.
 */
export const RETRY_WINDOW = 256;

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

/** An event id is already stored, and this append is not a retry of the batch that stored it. */
export class DuplicateEventIdError extends DomainError {
  constructor(
    readonly streamId: string,
    readonly eventId: string,
  ) {
    super('DUPLICATE_EVENT_ID', `Stream ${streamId}: event id ${eventId} is already stored by a different append`, 409);
  }
}

/** The stream was deleted (EventStoreDB: deleted or tombstoned); nothing can be read from or added to it. */
export class StreamDeletedError extends DomainError {
  constructor(readonly streamId: string) {
    super('STREAM_DELETED', `Stream ${streamId} was deleted`, 410);
  }
}

/** The batch is larger than the event store accepts in one append. */
export class AppendTooLargeError extends DomainError {
  constructor(readonly streamId: string, detail: string) {
    super('APPEND_TOO_LARGE', `Stream ${streamId}: the events are too large to store at once (${detail})`, 413);
  }
}

/** The event store did not answer in time or cannot be reached; the operation may be retried. */
export class EventStoreUnavailableError extends DomainError {
  readonly retryable = true;
  constructor(detail: string, options?: { cause?: unknown }) {
    super('EVENT_STORE_UNAVAILABLE', `The event store is unavailable, try again shortly (${detail})`, 503);
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** The event store cannot be used as configured; the service must not start with it. */
export class EventStoreConfigurationError extends Error {
  readonly code = 'EVENT_STORE_CONFIGURATION';
  constructor(message: string) {
    super(message);
    this.name = 'EventStoreConfigurationError';
  }
}
