// The production event store: EventStoreDB through its gRPC client. The vendor's errors and
// types stop here; callers see only the port's.
//
// Positions are commit positions. For ordinary appends (implicit transactions) EventStoreDB gives
// every event its own commit position, equal to its prepare position, which is why a bare commit
// position is enough to resume a read or a subscription from. They are byte offsets in this
// server's log, meaningless anywhere else: checkpoints carry the log's identity (identity()).
// Needs EventStoreDB 22.6 or later (checked at connect).

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ANY,
  BACKWARDS,
  DeadlineExceededError,
  END,
  EventStoreDBClient,
  MaxAppendSizeExceededError,
  NO_STREAM,
  NotLeaderError,
  START,
  STREAM_EXISTS,
  StreamDeletedError as EsdbStreamDeletedError,
  StreamNotFoundError,
  TimeoutError,
  UnavailableError,
  WrongExpectedVersionError,
  convertToCommandError,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type AppendToStreamOptions,
  type CurrentRevision,
  type EventData,
  type ReadAllOptions as EsdbReadAllOptions,
  type ReadPosition,
  type ReadStreamOptions as EsdbReadStreamOptions,
  type RecordedEvent,
  type ResolvedEvent,
  type SubscribeToAllOptions,
} from '@eventstore/db-client';
import {
  AppendTooLargeError,
  DuplicateEventIdError,
  EventStoreConfigurationError,
  EventStoreUnavailableError,
  onlyTypes,
  RETRY_WINDOW,
  StreamDeletedError,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventMetadata,
  type EventPayload,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type Revision,
  type StoredEvent,
  type SubscribeOptions,
  type Subscription,
} from './eventStore';
import { chainHash, GENESIS_HASH, type ChainLink } from './eventChain';

/** What servers older than 22.6 put in the position of an event read from its stream. */
const NO_POSITION = 2n ** 64n - 1n;

/** Stream reads give event positions from this server version on; appends and retries need them. */
const MIN_SERVER_VERSION: readonly [number, number] = [22, 6];

/** The log's identity, written once; it is the store's own, so readers of the log never see it. */
export const IDENTITY_STREAM = 'edge-ml-store-identity';
const IDENTITY_EVENT = 'StoreIdentityAssigned';

/** A read the caller may stop early: stopping cancels the gRPC call. */
export interface EsdbRead<T> extends AsyncIterable<T> {
  cancel(): Promise<void>;
}

/** The client's subscription (a Readable): iterated once, unsubscribed and destroyed on close. */
export interface EsdbSubscriptionSource extends AsyncIterable<AllStreamResolvedEvent> {
  unsubscribe(): Promise<void>;
  destroy(): void;
}

/** The part of `EventStoreDBClient` this adapter uses; narrow, so tests can stand a fake server in. */
export interface EsdbClient {
  appendToStream(streamName: string, events: EventData[], options: AppendToStreamOptions): Promise<{
    success: boolean;
    nextExpectedRevision: bigint;
    position?: { commit: bigint; prepare: bigint };
  }>;
  readStream(streamName: string, options: EsdbReadStreamOptions): EsdbRead<ResolvedEvent>;
  readAll(options: EsdbReadAllOptions): EsdbRead<AllStreamResolvedEvent>;
  subscribeToAll(options: SubscribeToAllOptions): EsdbSubscriptionSource;
  dispose(): Promise<void>;
}

/** What `connect` learns from the client before using it. */
export interface EsdbServerInfo {
  /** As the server reports it (`24.10.0.0`), or `unknown` when it does not (before 21.10). */
  version: string;
  /** False when the connection string says `throwOnAppendFailure=false`. */
  throwOnAppendFailure: boolean;
}

export class EsdbEventStore implements EventStore {
  private readonly subscriptions = new Set<EsdbSubscription>();

  private constructor(
    private readonly client: EsdbClient,
    private readonly storeIdentity: string,
  ) {}

  /**
   * Connects and checks the server before anything else uses it: version 22.6 or later, appends
   * that throw on failure, and the log's identity (made on first use). Throws
   * EventStoreConfigurationError when the server or the connection string cannot be used, and
   * EventStoreUnavailableError when the server cannot be reached.
   */
  static async connect(connectionString: string): Promise<EsdbEventStore> {
    const client = EventStoreDBClient.connectionString(connectionString);
    try {
      return await EsdbEventStore.open(client, await serverInfo(client));
    } catch (error) {
      await client.dispose().catch(() => undefined);
      throw error;
    }
  }

  /** `connect` past the connection string: the client and what it reported about the server. */
  static async open(client: EsdbClient, server: EsdbServerInfo): Promise<EsdbEventStore> {
    if (!server.throwOnAppendFailure) {
      // With it a conflict comes back as an answer, not an error; every conflict check here would
      // have to trust an answer the client builds wrongly in its batch-append path.
      throw new EventStoreConfigurationError(
        'EVENTSTORE_URL sets throwOnAppendFailure=false; this service needs the default (true): remove the setting',
      );
    }
    checkServerVersion(server.version);
    return new EsdbEventStore(client, await ensureIdentity(client));
  }

  async identity(): Promise<string> {
    return this.storeIdentity;
  }

  /**
   * The server recognises a retried append only when it is sent with the expected revision of the
   * first attempt; with the stream's current revision, `any` or `stream_exists` it would store the
   * batch a second time. So the stream's tail is searched for the batch first (a stream that must
   * not exist needs no search: the server refuses or recognises it), and again after a conflict.
   */
  async appendToStream(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new Error(`Stream ${streamId}: an append needs at least one event`);
    const repeated = events.find((e, i) => events.findIndex((other) => other.id === e.id) !== i);
    if (repeated) throw new DuplicateEventIdError(streamId, repeated.id);
    for (let attempt = 1; ; attempt += 1) {
      const newestFirst = expected === 'no_stream' ? [] : await this.readTail(streamId, RETRY_WINDOW);
      if (expected !== 'no_stream') {
        const earlier = this.previousAppend(streamId, events, expected, newestFirst);
        if (earlier) return earlier;
      }
      // The chain continues from the head just read, so the append must land right after it: an
      // `any` or `stream_exists` append is pinned to that head, and retried when another came first.
      const head = newestFirst[0];
      const pinned: ExpectedRevision =
        expected === 'any' || expected === 'stream_exists' ? (head ? head.revision : expected === 'any' ? 'no_stream' : expected) : expected;
      let previous = head ? chainHashOf(head) : GENESIS_HASH;
      let revision = head ? head.revision : -1n;
      const chained = events.map((e) => {
        revision += 1n;
        const hash = chainHash(previous, { streamId, revision, id: e.id, type: e.type, data: JSON.stringify(e.data), metadata: JSON.stringify(e.metadata) });
        previous = hash;
        return jsonEvent({ id: e.id, type: e.type, data: e.data, metadata: { ...e.metadata, [HASH_FIELD]: hash } });
      });
      let result: Awaited<ReturnType<EsdbClient['appendToStream']>>;
      try {
        result = await this.client.appendToStream(streamId, chained, { expectedRevision: toEsdbExpected(pinned) });
      } catch (error) {
        if (error instanceof WrongExpectedVersionError) {
          if (pinned !== expected && attempt < PINNED_APPEND_ATTEMPTS) {
            // Spread the racers out, or the same ones collide round after round.
            if (attempt > 2) await sleep(Math.random() * attempt);
            continue;
          }
          return this.afterConflict(streamId, events, expected, toActualRevision(error.actualVersion));
        }
        throw toStoreError(error, streamId);
      }
      // Refused at connect, but an unchecked `success` would report a conflict as a committed write.
      if (!result.success) {
        if (pinned !== expected && attempt < PINNED_APPEND_ATTEMPTS) continue;
        return this.afterConflict(streamId, events, expected, undefined);
      }
      const position = result.position?.commit ?? (await this.positionOf(streamId, result.nextExpectedRevision));
      return { nextExpectedRevision: result.nextExpectedRevision, position };
    }
  }

  /** A conflict may be a retry the server did not recognise (the batch stored before other events). */
  private async afterConflict(
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
    actual: Revision | 'no_stream' | undefined,
  ): Promise<AppendResult> {
    const earlier = this.previousAppend(streamId, events, undefined, await this.readTail(streamId, RETRY_WINDOW));
    if (earlier) return earlier;
    throw new WrongExpectedRevisionError(streamId, expected, actual ?? (await this.headRevision(streamId)));
  }

  /**
   * The first append's answer when the batch is stored among the stream's last RETRY_WINDOW events
   * (its ids consecutively, in order), else undefined. Throws DuplicateEventIdError as SQLite does:
   * when the first id is stored but not the rest in order, or when a later id is stored and the
   * expected revision holds (`expected` undefined: it did not, which is a plain conflict).
   */
  private previousAppend(
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision | undefined,
    newestFirst: readonly RecordedEvent[],
  ): AppendResult | undefined {
    const tail = [...newestFirst].reverse();
    const start = tail.findIndex((e) => e.id === events[0]!.id);
    if (start < 0) {
      const taken = events.find((e) => tail.some((stored) => stored.id === e.id));
      if (taken && expected !== undefined && holds(expected, newestFirst[0]?.revision)) {
        throw new DuplicateEventIdError(streamId, taken.id);
      }
      return undefined;
    }
    const stored = tail.slice(start, start + events.length);
    const last = stored.at(-1);
    if (stored.length !== events.length || !last || stored.some((e, i) => e.id !== events[i]!.id)) {
      throw new DuplicateEventIdError(streamId, events[0]!.id);
    }
    return { nextExpectedRevision: last.revision, position: streamEventPosition(last) };
  }

  /** The stream's last `count` events, newest first; none when it does not exist. */
  private async readTail(streamId: string, count: number): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: count });
      for await (const resolved of cancelOnExit(read)) if (resolved.event) events.push(resolved.event);
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw toStoreError(error, streamId);
    }
    return events;
  }

  private async headRevision(streamId: string): Promise<Revision | 'no_stream'> {
    const [last] = await this.readTail(streamId, 1);
    return last ? last.revision : 'no_stream';
  }

  /** The server leaves the position out of some append answers (an idempotent retry among them). */
  private async positionOf(streamId: string, revision: Revision): Promise<Position> {
    try {
      for await (const resolved of cancelOnExit(this.client.readStream(streamId, { fromRevision: revision, maxCount: 1 }))) {
        if (resolved.event) return streamEventPosition(resolved.event);
      }
    } catch (error) {
      throw toStoreError(error, streamId);
    }
    throw new Error(`Stream ${streamId}: no event at revision ${revision} right after appending it`);
  }

  async readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]> {
    const events: StoredEvent[] = [];
    if (options?.maxCount !== undefined && options.maxCount <= 0) return events;
    try {
      const read = this.client.readStream(streamId, {
        fromRevision: options?.fromRevision ?? START,
        ...(options?.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
      });
      for await (const resolved of cancelOnExit(read)) {
        if (resolved.event) events.push(toStoredEvent(resolved.event, streamEventPosition(resolved.event)));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw toStoreError(error, streamId);
    }
    return events;
  }

  async *readAll(options?: ReadAllOptions): AsyncGenerator<StoredEvent> {
    const after = options?.after;
    let remaining = options?.maxCount ?? Number.POSITIVE_INFINITY;
    if (remaining <= 0) return;
    // readAll has no server-side filter in this client, and system events must not count
    // against maxCount, so the read is unbounded and stopped (cancelled) once enough are in.
    try {
      const read = this.client.readAll({ fromPosition: fromPosition(after) });
      for await (const resolved of cancelOnExit(read)) {
        const event = ourEvent(resolved, after);
        if (!event) continue;
        yield event;
        remaining -= 1;
        if (remaining <= 0) return;
      }
    } catch (error) {
      throw toStoreError(error, '$all');
    }
  }

  async *readChain(options?: ReadAllOptions): AsyncGenerator<readonly ChainLink[]> {
    let remaining = options?.maxCount ?? Number.POSITIVE_INFINITY;
    if (remaining <= 0) return;
    let page: ChainLink[] = [];
    try {
      const read = this.client.readAll({ fromPosition: fromPosition(options?.after) });
      for await (const resolved of cancelOnExit(read)) {
        const event = ourEvent(resolved, options?.after);
        if (!event || !resolved.event) continue;
        page.push(toChainLink(resolved.event, event.position));
        remaining -= 1;
        if (remaining <= 0) break;
        if (page.length === CHAIN_PAGE_SIZE) {
          yield page;
          page = [];
        }
      }
    } catch (error) {
      throw toStoreError(error, '$all');
    }
    if (page.length > 0) yield page;
  }

  subscribeToAll(options?: SubscribeOptions): Subscription {
    const after = options?.after;
    const subscription: EsdbSubscription = new EsdbSubscription(
      async () => this.client.subscribeToAll({ fromPosition: await this.subscriptionStart(after), filter: excludeSystemEvents() }),
      after,
      () => this.subscriptions.delete(subscription),
    );
    this.subscriptions.add(subscription);
    // Left out here, not by the server: the position of the events left out still moves the stream on.
    return onlyTypes(subscription, options?.types);
  }

  /**
   * The server reads the record at or after `fromPosition` and starts after it (22.x and later), so
   * a position that is no longer a record's (its event scavenged) would lose the next event. Starting
   * from the last record at or before `after` loses nothing; ourEvent then drops every event that is
   * not strictly after `after`, comparing positions exactly.
   */
  private async subscriptionStart(after: Position | undefined): Promise<ReadPosition> {
    if (after === undefined) return START;
    try {
      const read = this.client.readAll({ direction: BACKWARDS, fromPosition: { commit: after, prepare: after }, maxCount: 1 });
      for await (const resolved of cancelOnExit(read)) {
        const position = resolved.event?.position;
        if (position && position.commit <= after) return position;
      }
    } catch (error) {
      throw toStoreError(error, '$all');
    }
    return START;
  }

  async headPosition(): Promise<Position | undefined> {
    // The tail of $all is often system events ($stats and the like): walk back past them.
    try {
      const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END });
      for await (const resolved of cancelOnExit(read)) {
        const event = ourEvent(resolved, undefined);
        if (event) return event.position;
      }
    } catch (error) {
      throw toStoreError(error, '$all');
    }
    return undefined;
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.client.dispose();
  }
}

/**
 * One for-await over the client's stream: nothing is kept per event. close() destroys the stream,
 * which settles a pending next() at once (its premature-close error is expected then, and dropped),
 * and unsubscribes, which cancels the call on the server; both also when iteration never started.
 */
class EsdbSubscription implements Subscription {
  private started = false;
  private closed = false;
  private source: EsdbSubscriptionSource | undefined;

  constructor(
    private readonly open: () => Promise<EsdbSubscriptionSource>,
    private readonly after: Position | undefined,
    private readonly onEnd: () => void,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<StoredEvent> {
    if (this.started) throw new Error('A subscription can be iterated only once');
    this.started = true;
    return this.run();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onEnd();
    await this.release();
  }

  private async release(): Promise<void> {
    const source = this.source;
    this.source = undefined;
    if (!source) return;
    source.destroy();
    // Cancelling a call the server already ended, or never got, is not a failure of close().
    await source.unsubscribe().catch(() => undefined);
  }

  private async *run(): AsyncGenerator<StoredEvent> {
    try {
      const source = await this.open();
      this.source = source;
      if (this.closed) {
        await this.release();
        return;
      }
      for await (const resolved of source) {
        if (this.closed) return;
        const event = ourEvent(resolved, this.after);
        if (event) yield event;
      }
    } catch (error) {
      if (this.closed) return;
      throw toStoreError(error, '$all');
    } finally {
      await this.close();
    }
  }
}

/**
 * Both are protected in the client's typings and plain getters at runtime (6.2.1); checked, not
 * cast. The setting is refused before the server is asked anything, so it fails without a server.
 */
async function serverInfo(client: EventStoreDBClient): Promise<EsdbServerInfo> {
  const throwOnAppendFailure = Reflect.get(client, 'throwOnAppendFailure') !== false;
  if (!throwOnAppendFailure) return { version: 'unknown', throwOnAppendFailure };
  let features: unknown;
  try {
    // The ServerFeatures service, asked once per connection; it names the server's version.
    features = await Reflect.get(client, 'capabilities');
  } catch (error) {
    throw toStoreError(error, '$all');
  }
  const version = isRecord(features) && typeof features.serverVersion === 'string' ? features.serverVersion : 'unknown';
  return { version, throwOnAppendFailure };
}

function checkServerVersion(version: string): void {
  const match = /^(\d+)\.(\d+)/.exec(version);
  const [major, minor] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
  const [needMajor, needMinor] = MIN_SERVER_VERSION;
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return;
  throw new EventStoreConfigurationError(
    `EventStoreDB ${match ? version : '(version not reported, so older than 21.10)'} at EVENTSTORE_URL is too old: ` +
      `version ${needMajor}.${needMinor} or later is needed (older servers give stream reads no positions)`,
  );
}

/**
 * Reads the log's identity, making it on first use. "Stream must not exist" makes processes that
 * start at once on a new server agree: one write wins, and every process reads that one.
 */
async function ensureIdentity(client: EsdbClient): Promise<string> {
  const existing = await readIdentity(client);
  if (existing) return existing;
  try {
    const metadata: EventMetadata = { actor: 'system:event-store', correlationId: randomUUID(), time: new Date().toISOString() };
    const event = jsonEvent({ type: IDENTITY_EVENT, data: { identity: randomUUID() }, metadata: { ...metadata } });
    await client.appendToStream(IDENTITY_STREAM, [event], { expectedRevision: NO_STREAM });
  } catch (error) {
    if (!(error instanceof WrongExpectedVersionError)) throw toStoreError(error, IDENTITY_STREAM);
  }
  const written = await readIdentity(client);
  if (!written) throw new Error(`Stream ${IDENTITY_STREAM}: no identity right after writing it`);
  return written;
}

async function readIdentity(client: EsdbClient): Promise<string | undefined> {
  try {
    for await (const resolved of cancelOnExit(client.readStream(IDENTITY_STREAM, { fromRevision: START, maxCount: 1 }))) {
      const data: unknown = resolved.event?.data;
      if (isRecord(data) && typeof data.identity === 'string') return data.identity;
      throw new Error(`Stream ${IDENTITY_STREAM}: its first event holds no identity`);
    }
  } catch (error) {
    if (error instanceof StreamNotFoundError) return undefined;
    throw toStoreError(error, IDENTITY_STREAM);
  }
  return undefined;
}

/** The vendor's errors that callers can act on, as the port's; anything else passes unchanged. */
function toStoreError(caught: unknown, streamId: string): unknown {
  // Some calls (the server-features one) reject with the raw gRPC error: read it as the client would.
  const error = caught instanceof Error ? convertToCommandError(caught) : caught;
  if (error instanceof EsdbStreamDeletedError) return new StreamDeletedError(error.streamName || streamId);
  if (error instanceof MaxAppendSizeExceededError) {
    return new AppendTooLargeError(streamId, `the server accepts at most ${error.maxAppendSize} bytes per append`);
  }
  if (
    error instanceof DeadlineExceededError ||
    error instanceof UnavailableError ||
    error instanceof TimeoutError ||
    error instanceof NotLeaderError
  ) {
    return new EventStoreUnavailableError(error.message || error.constructor.name, { cause: error });
  }
  return error;
}

/** Whether `expected` holds for a stream whose last revision is `head` (undefined: no stream). */
function holds(expected: ExpectedRevision, head: Revision | undefined): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return head === undefined;
  if (expected === 'stream_exists') return head !== undefined;
  return head === expected;
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
  if (!event || event.type.startsWith('$') || event.streamId.startsWith('$') || event.streamId === IDENTITY_STREAM) return undefined;
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

/**
 * The chain hash rides in the metadata (EventStoreDB has no other place for it); it is hashed
 * without it, as the metadata text the appender wrote, whose key order JSON keeps.
 */
const HASH_FIELD = 'chainHash';
/**
 * How often an append pinned to the head it read is tried again after another append came first:
 * each round one of the racing appends wins, so this bounds how many may race on one stream.
 */
const PINNED_APPEND_ATTEMPTS = 100;
/** Links per page of readChain. */
const CHAIN_PAGE_SIZE = 1024;

function chainHashOf(event: RecordedEvent): string {
  const metadata = event.metadata instanceof Uint8Array ? parseJson(event.metadata, event.id) : event.metadata;
  const hash = isRecord(metadata) ? metadata[HASH_FIELD] : undefined;
  // A head written before events were chained starts the chain afresh; verify reports it unchained.
  return typeof hash === 'string' ? hash : GENESIS_HASH;
}

function toChainLink(event: RecordedEvent, position: Position): ChainLink {
  const metadata = event.metadata instanceof Uint8Array ? parseJson(event.metadata, event.id) : event.metadata;
  const { [HASH_FIELD]: hash, ...rest } = isRecord(metadata) ? metadata : {};
  return {
    streamId: event.streamId,
    revision: event.revision,
    position,
    id: event.id,
    type: event.type,
    data: JSON.stringify(toPayload(event.data, event.id)),
    metadata: JSON.stringify(rest),
    hash: typeof hash === 'string' ? hash : undefined,
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
async function* cancelOnExit<T>(read: EsdbRead<T>): AsyncGenerator<T> {
  let finished = false;
  try {
    for await (const item of read) yield item;
    finished = true;
  } finally {
    if (!finished) await read.cancel();
  }
}
