// The production event store: EventStoreDB through its gRPC client. The vendor's errors and
// types stop here; callers see only the port's.
//
// Positions are commit positions. For ordinary appends (implicit transactions) EventStoreDB gives
// every event its own commit position, equal to its prepare position, which is why a bare commit
// position is enough to resume a read or a subscription from.

import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendExpectedRevision,
  type CurrentRevision,
  type ReadPosition,
  type RecordedEvent,
  type StreamingRead,
} from '@eventstore/db-client';
import {
  WrongExpectedRevisionError,
  type AppendResult,
  type EventMetadata,
  type EventPayload,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type Revision,
  type StoredEvent,
  type Subscription,
} from './eventStore';

/** What servers older than 22.6 put in the position of an event read from its stream. */
const NO_POSITION = 2n ** 64n - 1n;

export class EsdbEventStore implements EventStore {
  private readonly subscriptions = new Set<EsdbSubscription>();

  private constructor(private readonly client: EventStoreDBClient) {}

  /** Connects lazily: a bad connection string throws here, an unreachable server on first use. */
  static connect(connectionString: string): EsdbEventStore {
    return new EsdbEventStore(EventStoreDBClient.connectionString(connectionString));
  }

  /**
   * Idempotent retry is the server's: the same ids appended again with the expected revision of
   * the first attempt are recognised and answered with the first attempt's result. Unlike the
   * SQLite store, a retry sent with a later expected revision is not recognised.
   */
  async appendToStream(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new Error(`Stream ${streamId}: an append needs at least one event`);
    try {
      const result = await this.client.appendToStream(
        streamId,
        events.map((e) => jsonEvent({ id: e.id, type: e.type, data: e.data, metadata: { ...e.metadata } })),
        { expectedRevision: toEsdbExpected(expected) },
      );
      const position = result.position?.commit ?? (await this.positionOf(streamId, result.nextExpectedRevision));
      return { nextExpectedRevision: result.nextExpectedRevision, position };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        throw new WrongExpectedRevisionError(streamId, expected, toActualRevision(error.actualVersion));
      }
      throw error;
    }
  }

  /** The server leaves the position out of some append answers (an idempotent retry among them). */
  private async positionOf(streamId: string, revision: Revision): Promise<Position> {
    for await (const resolved of cancelOnExit(this.client.readStream(streamId, { fromRevision: revision, maxCount: 1 }))) {
      if (resolved.event) return streamEventPosition(resolved.event);
    }
    throw new Error(`Stream ${streamId}: no event at revision ${revision} right after appending it`);
  }

  async readStream(streamId: string, options?: { fromRevision?: Revision }): Promise<StoredEvent[]> {
    const events: StoredEvent[] = [];
    try {
      const read = this.client.readStream(streamId, { fromRevision: options?.fromRevision ?? START });
      for await (const resolved of cancelOnExit(read)) {
        if (resolved.event) events.push(toStoredEvent(resolved.event, streamEventPosition(resolved.event)));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  async *readAll(options?: ReadAllOptions): AsyncGenerator<StoredEvent> {
    const after = options?.after;
    let remaining = options?.maxCount ?? Number.POSITIVE_INFINITY;
    if (remaining <= 0) return;
    // readAll has no server-side filter in this client, and system events must not count
    // against maxCount, so the read is unbounded and stopped (cancelled) once enough are in.
    const read = this.client.readAll({ fromPosition: fromPosition(after) });
    for await (const resolved of cancelOnExit(read)) {
      const event = ourEvent(resolved, after);
      if (!event) continue;
      yield event;
      remaining -= 1;
      if (remaining <= 0) return;
    }
  }

  subscribeToAll(options?: { after?: Position }): Subscription {
    const after = options?.after;
    const inner = this.client.subscribeToAll({ fromPosition: fromPosition(after), filter: excludeSystemEvents() });
    const subscription = new EsdbSubscription(inner, after, () => this.subscriptions.delete(subscription));
    this.subscriptions.add(subscription);
    return subscription;
  }

  async headPosition(): Promise<Position | undefined> {
    // The tail of $all is often system events ($stats and the like): walk back past them.
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END });
    for await (const resolved of cancelOnExit(read)) {
      const event = ourEvent(resolved, undefined);
      if (event) return event.position;
    }
    return undefined;
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.client.dispose();
  }
}

/**
 * Ends promptly on close(): a pending next() resolves done without waiting for the gRPC stream
 * to notice its cancellation.
 */
class EsdbSubscription implements Subscription {
  private started = false;
  private closed = false;
  private readonly closedSignal: Promise<IteratorReturnResult<undefined>>;
  private signalClosed!: () => void;

  constructor(
    private readonly inner: AllStreamSubscription,
    private readonly after: Position | undefined,
    private readonly onEnd: () => void,
  ) {
    this.closedSignal = new Promise((resolve) => {
      this.signalClosed = () => resolve({ done: true, value: undefined });
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<StoredEvent> {
    if (this.started) throw new Error('A subscription can be iterated only once');
    this.started = true;
    return this.run();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.signalClosed();
    this.onEnd();
    await this.inner.unsubscribe();
  }

  private async *run(): AsyncGenerator<StoredEvent> {
    const source = this.inner[Symbol.asyncIterator]();
    try {
      while (!this.closed) {
        const next = source.next();
        // Once closed, the abandoned next() may still reject (cancelled call): nobody awaits it.
        next.catch(() => undefined);
        const result = await Promise.race([next, this.closedSignal]);
        if (result.done) return;
        const event = ourEvent(result.value, this.after);
        if (event) yield event;
      }
    } finally {
      await this.close();
      // Not source.return(): it would queue behind a next() still pending on the cancelled call.
      // Destroying settles that next() (its rejection is ignored above) and frees the stream.
      this.inner.destroy();
    }
  }
}

function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    case 'any':
      return ANY;
    default:
      return expected;
  }
}

/** The client reports a missing stream as `no_stream` (and some paths as -1); never BigInt() it. */
function toActualRevision(actual: CurrentRevision): Revision | 'no_stream' {
  if (typeof actual === 'bigint') return actual < 0n ? 'no_stream' : actual;
  return 'no_stream';
}

/** Reading $all from a position includes the event at it; callers skip it (`after` is exclusive). */
function fromPosition(after: Position | undefined): ReadPosition {
  return after === undefined ? START : { commit: after, prepare: after };
}

/** Our event from $all, or undefined for system events, unresolved links and events at or before `after`. */
function ourEvent(resolved: AllStreamResolvedEvent, after: Position | undefined): StoredEvent | undefined {
  const event = resolved.event;
  if (!event || event.type.startsWith('$') || event.streamId.startsWith('$')) return undefined;
  const position = event.position.commit;
  if (after !== undefined && position <= after) return undefined;
  return toStoredEvent(event, position);
}

function streamEventPosition(event: RecordedEvent): Position {
  const position = event.position?.commit;
  if (position === undefined || position === NO_POSITION) {
    throw new Error('EventStoreDB gave no position for a stream event: version 22.6 or later is needed');
  }
  return position;
}

function toStoredEvent(event: RecordedEvent, position: Position): StoredEvent {
  return {
    id: event.id,
    streamId: event.streamId,
    revision: event.revision,
    position,
    type: event.type,
    data: toPayload(event.data, event.id),
    metadata: toMetadata(event.metadata, event.id),
  };
}

function toPayload(data: unknown, id: string): EventPayload {
  const value = data instanceof Uint8Array ? parseJson(data, id) : data;
  if (!isRecord(value)) throw new Error(`Event ${id}: data is not a JSON object`);
  return value;
}

function toMetadata(metadata: unknown, id: string): EventMetadata {
  const value = metadata instanceof Uint8Array ? parseJson(metadata, id) : metadata;
  if (!isRecord(value) || typeof value.actor !== 'string' || typeof value.correlationId !== 'string' || typeof value.time !== 'string') {
    throw new Error(`Event ${id}: metadata lacks actor, correlationId or time`);
  }
  const result: EventMetadata = { actor: value.actor, correlationId: value.correlationId, time: value.time };
  if (typeof value.causationId === 'string') result.causationId = value.causationId;
  return result;
}

function parseJson(bytes: Uint8Array, id: string): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new Error(`Event ${id}: not JSON`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Iterates a streaming read; a consumer that stops early cancels the gRPC call instead of leaking it. */
async function* cancelOnExit<T>(read: StreamingRead<T>): AsyncGenerator<T> {
  let finished = false;
  try {
    for await (const item of read) yield item;
    finished = true;
  } finally {
    if (!finished) await read.cancel();
  }
}
