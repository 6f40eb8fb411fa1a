// An in-memory stand-in for an EventStoreDB server behind the adapter's client interface, so the
// adapter's own logic runs in every test run (no server can run on our machines). It reproduces
// the server behaviours the adapter has to cope with, as read in EventStore/EventStore (22.x-24.x):
// - appends (IndexWriter.CheckCommit): an expected revision below the stream's current one is a
//   recognised retry only when the batch's ids sit right after it, else a conflict; the current
//   revision itself, `any` and `stream_exists` store the batch again (the server's id cache, which
//   sometimes catches the latter two, is left out: the adapter must not rely on it);
// - an idempotent answer carries no position;
// - positions are byte offsets with gaps, system records sit between ours, and a scavenge removes
//   records without moving the others;
// - a catch-up subscription from a position reads the record at or after it and starts after that
//   one (AllSubscriptionFiltered.Subscribe), which loses an event when the position is no record's;
// - reading $all forwards from a position includes the record at it; backwards excludes it.
// The real client turns a missing stream into StreamNotFoundError while iterating; so does this.

import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  BACKWARDS,
  END,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  ANY,
  StreamNotFoundError,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type AppendToStreamOptions,
  type EventData,
  type ReadAllOptions,
  type ReadStreamOptions,
  type ResolvedEvent,
  type SubscribeToAllOptions,
} from '@eventstore/db-client';
import type { EsdbClient, EsdbRead, EsdbSubscriptionSource } from '../../stores/eventstore/esdbEventStore';

interface FakeRecord {
  streamId: string;
  id: string;
  revision: bigint;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  position: bigint;
}

type Method = 'appendToStream' | 'readStream' | 'readAll' | 'subscribeToAll';

export class FakeEsdbServer implements EsdbClient {
  private readonly log: FakeRecord[] = [];
  private readonly streams = new Map<string, FakeRecord[]>();
  private nextPosition = 0n;
  private readonly waiting = new Set<() => void>();
  private readonly failures = new Map<Method, Error[]>();
  /** Subscriptions handed out and not yet destroyed, to check that close() releases them. */
  readonly openSubscriptions = new Set<FakeSubscription>();
  disposed = 0;
  /** Like `throwOnAppendFailure=false`: a conflict is answered `success: false` instead of thrown. */
  answerConflicts = false;

  constructor() {
    this.systemRecord('$epoch-information');
  }

  /** The next call of `method` fails with `error` (as the client would raise it). */
  failNext(method: Method, error: Error): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), error]);
  }

  /** A record of the server's own ($stats and the like) between ours. */
  systemRecord(type = '$statsCollected'): void {
    this.write('$stats-127.0.0.1:2113', type, {}, randomUUID());
  }

  /** Removes the record at `position` from $all, as a scavenge does; other positions stay. */
  scavenge(position: bigint): void {
    const index = this.log.findIndex((r) => r.position === position);
    if (index < 0) throw new Error(`no record at ${position}`);
    this.log.splice(index, 1);
  }

  async appendToStream(
    streamName: string,
    events: EventData[],
    options: AppendToStreamOptions,
  ): Promise<{ success: boolean; nextExpectedRevision: bigint; position?: { commit: bigint; prepare: bigint } }> {
    this.failIfAsked('appendToStream');
    const expected = options.expectedRevision ?? ANY;
    const stream = this.streams.get(streamName) ?? [];
    const current = stream.length - 1; // -1: no stream
    const conflict = () => {
      if (this.answerConflicts) return { success: false, nextExpectedRevision: BigInt(current) };
      throw new WrongExpectedVersionError(undefined, {
        streamName,
        expected,
        current: current < 0 ? 'no_stream' : BigInt(current),
      });
    };
    const explicit = expectedNumber(expected);
    if (explicit !== undefined && explicit < current) {
      // The batch must sit right after the expected revision: a retry of that very append.
      for (const [i, event] of events.entries()) {
        if (stream[explicit + 1 + i]?.id !== event.id) return conflict();
      }
      return { success: true, nextExpectedRevision: BigInt(explicit + events.length) };
    }
    if (explicit !== undefined && explicit > current) return conflict();
    if (expected === STREAM_EXISTS && current < 0) return conflict();
    let last: FakeRecord | undefined;
    for (const event of events) {
      if (event.contentType !== 'application/json') throw new Error('the adapter writes JSON events only');
      last = this.write(streamName, event.type, jsonObject(event.data), event.id, jsonObject(event.metadata));
      this.systemRecordEvery();
    }
    return { success: true, nextExpectedRevision: last!.revision, position: { commit: last!.position, prepare: last!.position } };
  }

  readStream(streamName: string, options: ReadStreamOptions): EsdbRead<ResolvedEvent> {
    this.failIfAsked('readStream');
    const backwards = options.direction === BACKWARDS;
    const max = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
    const from = options.fromRevision ?? (backwards ? END : START);
    const stream = this.streams.get(streamName);
    async function* read(): AsyncGenerator<ResolvedEvent> {
      if (!stream) throw new StreamNotFoundError(undefined, streamName);
      let records = backwards ? [...stream].reverse() : stream;
      if (typeof from === 'bigint') records = records.filter((r) => (backwards ? r.revision <= from : r.revision >= from));
      for (const record of records.slice(0, max)) yield { event: recorded(record) };
    }
    return withCancel(read());
  }

  readAll(options: ReadAllOptions): EsdbRead<AllStreamResolvedEvent> {
    this.failIfAsked('readAll');
    const backwards = options.direction === BACKWARDS;
    const max = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
    const from = options.fromPosition ?? (backwards ? END : START);
    const log = this.log;
    async function* read(): AsyncGenerator<AllStreamResolvedEvent> {
      let records = backwards ? [...log].reverse() : [...log];
      if (typeof from === 'object') {
        records = records.filter((r) => (backwards ? r.position < from.commit : r.position >= from.commit));
      }
      for (const record of records.slice(0, max)) yield { event: recorded(record) };
    }
    return withCancel(read());
  }

  subscribeToAll(options: SubscribeToAllOptions): EsdbSubscriptionSource {
    this.failIfAsked('subscribeToAll');
    const from = options.fromPosition ?? START;
    let after: bigint;
    if (from === START) after = -1n;
    else if (from === END) after = this.log.at(-1)?.position ?? -1n;
    else {
      // The server's start: the record at or after the position is taken as already seen.
      const first = this.log.find((r) => r.position >= from.commit);
      after = first ? first.position : (this.log.at(-1)?.position ?? -1n);
    }
    const subscription = new FakeSubscription(this, after, (s) => this.openSubscriptions.delete(s));
    this.openSubscriptions.add(subscription);
    return subscription;
  }

  async dispose(): Promise<void> {
    this.disposed += 1;
    for (const s of [...this.openSubscriptions]) s.destroy();
  }

  /** Records after `after` that pass the subscription's system-event filter, at most `max`. */
  recordsAfter(after: bigint, max: number): FakeRecord[] {
    const result: FakeRecord[] = [];
    // The log is in position order: binary search, so long catch-ups stay linear.
    let low = 0;
    let high = this.log.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.log[mid]!.position <= after) low = mid + 1;
      else high = mid;
    }
    for (let i = low; i < this.log.length && result.length < max; i++) {
      const record = this.log[i]!;
      if (!record.type.startsWith('$')) result.push(record);
    }
    return result;
  }

  /** Calls `wake` once after the next write. */
  onWrite(wake: () => void): () => void {
    this.waiting.add(wake);
    return () => this.waiting.delete(wake);
  }

  private writes = 0;

  private systemRecordEvery(): void {
    this.writes += 1;
    if (this.writes % 7 === 0) this.systemRecord();
  }

  private write(
    streamId: string,
    type: string,
    data: Record<string, unknown>,
    id: string,
    metadata: Record<string, unknown> = {},
  ): FakeRecord {
    const stream = this.streams.get(streamId) ?? [];
    const record: FakeRecord = { streamId, id, revision: BigInt(stream.length), type, data, metadata, position: this.nextPosition };
    // Byte offsets: a record's size, so positions have gaps that are no record's.
    this.nextPosition += 120n + BigInt(JSON.stringify(data).length);
    stream.push(record);
    this.streams.set(streamId, stream);
    this.log.push(record);
    for (const wake of [...this.waiting]) {
      this.waiting.delete(wake);
      wake();
    }
    return record;
  }

  private failIfAsked(method: Method): void {
    const queued = this.failures.get(method);
    const error = queued?.shift();
    if (error) throw error;
  }
}

/** A live subscription as the client gives it: an object-mode Readable with unsubscribe(). */
export class FakeSubscription extends Readable implements EsdbSubscriptionSource {
  unsubscribed = false;
  private stopWaiting: (() => void) | undefined;

  constructor(
    private readonly server: FakeEsdbServer,
    private after: bigint,
    private readonly onDestroy: (s: FakeSubscription) => void,
  ) {
    super({ objectMode: true, highWaterMark: 16 });
  }

  override _read(): void {
    // Messages come in on later turns of the event loop, as gRPC's do.
    setImmediate(() => {
      if (this.destroyed) return;
      const records = this.server.recordsAfter(this.after, 16);
      if (records.length === 0) {
        this.stopWaiting = this.server.onWrite(() => this._read());
        return;
      }
      for (const record of records) {
        this.after = record.position;
        this.push({ event: recorded(record) } satisfies AllStreamResolvedEvent);
      }
    });
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.stopWaiting?.();
    this.onDestroy(this);
    callback(error);
  }

  async unsubscribe(): Promise<void> {
    this.unsubscribed = true;
  }
}

function expectedNumber(expected: AppendExpectedRevision): number | undefined {
  if (expected === NO_STREAM) return -1;
  return typeof expected === 'bigint' ? Number(expected) : undefined;
}

function recorded(record: FakeRecord): AllStreamResolvedEvent['event'] & {} {
  return {
    streamId: record.streamId,
    id: record.id,
    revision: record.revision,
    type: record.type,
    isJson: true,
    created: new Date(0),
    data: record.data,
    metadata: record.metadata,
    position: { commit: record.position, prepare: record.position },
  };
}

/** Stored as the server stores JSON: bytes, read back as a fresh object. */
function jsonObject(value: unknown): Record<string, unknown> {
  const parsed: unknown = value === undefined ? {} : JSON.parse(JSON.stringify(value));
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object');
  return { ...parsed };
}

function withCancel<T>(iterator: AsyncGenerator<T>): EsdbRead<T> {
  return {
    [Symbol.asyncIterator]: () => iterator,
    cancel: async () => {
      await iterator.return(undefined);
    },
  };
}
