// One checkpointed subscription to the whole log, shared by the projection runner and the saga
// runner: it keeps each subscriber's checkpoint (with the log's identity), hands events over in
// batches, isolates a subscriber that fails on an event, retries it with a doubling backoff from its
// own checkpoint, and reports the failure (subscriberFailures.ts). Each subscriber is its own unit
// of failure and checkpoint: none writes what another does. What a subscriber does with a batch
// (buffered writes, reactions) is its runner's `BatchApplier`.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { EventStore, Position, StoredEvent, Subscription } from '../stores/eventstore/eventStore';
import type { CheckpointWrite, ReadStore, WriteOp } from '../stores/readstore/readStore';
import { loadCheckpoint } from './checkpoint';
import { eventBatches } from './eventBatches';
import { messageOf, SubscriberFailures, type FailureRecord, type SubscriberFailure } from './subscriberFailures';

export type { FailureRecord, SubscriberFailure } from './subscriberFailures';

export interface Subscriber {
  /** Names it in logs and reports. */
  readonly name: string;
  /** The name of the checkpoint it keeps in the read store. */
  readonly checkpoint: string;
  readonly handles: ReadonlySet<string>;
}

/** Where a subscriber is in the log. */
export interface SubscriberPosition<S extends Subscriber> {
  readonly subscriber: S;
  /** Every event up to here is applied (or needs nothing); undefined before the first event. */
  applied: Position | undefined;
  /** The checkpoint last stored. */
  stored: Position | undefined;
}

/** A subscriber's handler threw on an event; everything before it in the batch is stored. */
export class HandlerFailed extends Error {
  constructor(
    readonly event: StoredEvent,
    override readonly cause: unknown,
  ) {
    super(messageOf(cause));
    this.name = 'HandlerFailed';
  }
}

/**
 * The read store lost writes it had taken (a group commit that failed on a full disk): this batch's
 * are refused, and the subscriber applies the log again from its durable checkpoint.
 */
export class ReadStoreWritesLost extends Error {
  constructor(override readonly cause: unknown) {
    super(`the read store lost its last writes (${messageOf(cause)}); they are applied again from the stored checkpoints`);
    this.name = 'ReadStoreWritesLost';
  }
}

/**
 * Stores ops with the subscriber's new position as its checkpoint, one commit at a time so that a
 * checkpoint never moves backwards; on success the subscriber is at that position (`applied` and
 * `stored`). Without a position it stores the ops alone (a flush before a direct write), which a
 * redelivery makes good.
 */
export type Commit = (ops: readonly WriteOp[], position?: Position) => Promise<void>;

/**
 * What a runner does with a batch for one subscriber: applies `events` (in log order, skipping
 * those it has applied already) and moves it to the last event, through `commit` for what it
 * stores; moved only past events it does not handle, it may just have `applied` set, and its
 * checkpoint is flushed shortly after. A handler's failure is thrown as HandlerFailed, after what
 * came before it is committed; any other error leaves the batch unapplied (retried later). A
 * runner that is stopping may return before the end.
 */
export type BatchApplier<S extends Subscriber> = (position: SubscriberPosition<S>, events: readonly StoredEvent[], commit: Commit) => Promise<void>;

export interface CheckpointedSubscriptionOptions<S extends Subscriber> {
  events: EventStore;
  readStore: ReadStore;
  subscribers: readonly S[];
  apply: BatchApplier<S>;
  log: Logger;
  /** What a subscriber is called in logs (`projection`, `saga`): also the key naming it there. */
  kind: string;
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /** At most this many events per batch. */
  batchSize?: number;
  failures?: FailureRecord;
}

interface Waiter {
  position: Position;
  resolve(caughtUp: boolean): void;
}

const CHECKPOINT_FLUSH_MS = 100;
export const DEFAULT_BATCH_SIZE = 500;

/**
 * Feeds subscribers from one subscription to the whole log, each with its own checkpoint.
 *
 * A subscriber whose handler fails on an event is isolated: the others go on with the shared
 * subscription. The failure is logged once at error level and reported by `failures()` (and the
 * FailureRecord) with the event's position, type and stream. The subscriber is retried from its
 * own position with a backoff (`retryDelayMs` doubling up to `maxRetryDelayMs`), so a transient
 * fault heals itself and a fixed handler resumes at the event it failed on; nothing is ever
 * skipped. Once past it, the subscriber reads the log on its own until it has caught up, then
 * rejoins the shared subscription.
 *
 * Waits (`waitFor`) leave failed subscribers out: a write whose own read model is failed answers
 * once the healthy ones have applied it.
 */
export class CheckpointedSubscription<S extends Subscriber> {
  private readonly positions: SubscriberPosition<S>[];
  /** Subscribers fed by the shared subscription; the others are failed or catching up on their own. */
  private readonly shared = new Set<SubscriberPosition<S>>();
  /** The shared subscription has been through every event up to here. */
  private sharedPosition: Position | undefined;
  /** The last event of the batch the shared subscription is going through, if any. */
  private sharedInProgress: Position | undefined;
  private waiters: Waiter[] = [];
  private subscription: Subscription | undefined;
  private stopped = false;
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly retries = new Set<Promise<void>>();
  private flushTimer: NodeJS.Timeout | undefined;
  /** Checkpoint and status writes, one at a time and in order. */
  private writes: Promise<void> = Promise.resolve();
  private readonly failed: SubscriberFailures;
  private identity: string | undefined;
  /** Bumped when the read store lost writes and the positions went back to the durable checkpoints. */
  private epoch = 0;
  private lastLoss: unknown;
  private lossPending = false;
  /** When writes were last lost, and how long the shared subscription waits before it tries again. */
  private loss = { at: 0, delay: 0 };
  private stopListening: (() => void) | undefined;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly batchSize: number;
  private readonly log: Logger;

  constructor(private readonly options: CheckpointedSubscriptionOptions<S>) {
    const names = new Set<string>();
    for (const { name } of options.subscribers) {
      if (names.has(name)) throw new Error(`Two ${options.kind}s are named ${name}`);
      names.add(name);
    }
    this.positions = options.subscribers.map((subscriber) => ({ subscriber, applied: undefined, stored: undefined }));
    this.retryDelayMs = options.retryDelayMs ?? 1000;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 60_000;
    this.batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    this.log = options.log;
    this.failed = new SubscriberFailures(options.kind, options.log, (write) => this.enqueue(write), options.failures);
  }

  /**
   * Loads the checkpoints and starts following the log in the background. Throws, starting
   * nothing, when a checkpoint belongs to another log (ForeignCheckpointError): applying this log
   * on top of it would mix two histories.
   */
  async start(): Promise<void> {
    if (this.loop) throw new Error('This subscription was started already');
    const { events, readStore } = this.options;
    try {
      this.identity = await events.identity();
      for (const p of this.positions) {
        p.applied = await loadCheckpoint(readStore, p.subscriber.checkpoint, events);
        p.stored = p.applied;
      }
    } catch (error) {
      this.log.error({ err: error }, `the ${this.options.kind}s cannot start from their stored checkpoints`);
      throw error;
    }
    for (const p of this.positions) this.shared.add(p);
    this.stopListening = readStore.onCommitLost?.((error, durable) => this.writesLost(error, durable));
    await this.failed.loadStored();
    for (const p of this.positions) if (p.applied !== undefined) this.failed.passed(p.subscriber.name, p.applied);
    this.loop = this.followSharedUntilStopped();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    await this.subscription?.close();
    await this.loop;
    await Promise.all([...this.retries]);
    await this.flushCheckpoints();
    this.stopListening?.();
    for (const w of this.waiters) w.resolve(false);
    this.waiters = [];
  }

  /** The position every healthy subscriber has applied, or undefined before the first event. */
  get appliedPosition(): Position | undefined {
    let lowest: Position | undefined;
    for (const p of this.positions) {
      if (this.failed.has(p.subscriber.name)) continue;
      if (p.applied === undefined) return undefined;
      if (lowest === undefined || p.applied < lowest) lowest = p.applied;
    }
    return lowest;
  }

  failures(): SubscriberFailure[] {
    return this.failed.list();
  }

  /** Resolves true once every healthy subscriber has applied `position`; false when `timeoutMs` passed first, or once stopped. */
  waitFor(position: Position, timeoutMs: number): Promise<boolean> {
    if (this.caughtUp(position)) return Promise.resolve(true);
    // Stopped (maybe while it was starting): nothing will move it any further.
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: Waiter = { position, resolve };
      this.waiters.push(waiter);
      if (Number.isFinite(timeoutMs)) {
        setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          resolve(false);
        }, timeoutMs).unref();
      }
    });
  }

  private caughtUp(position: Position): boolean {
    return this.positions.every((p) => this.failed.has(p.subscriber.name) || (p.applied !== undefined && p.applied >= position));
  }

  private releaseWaiters(): void {
    const ready = this.waiters.filter((w) => this.caughtUp(w.position));
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve(true);
  }

  /** Only the event store can fail here (handlers' faults stay with their subscribers): subscribe again. */
  private async followSharedUntilStopped(): Promise<void> {
    let delay = this.retryDelayMs;
    while (!this.stopped) {
      const before = this.sharedPosition;
      try {
        await this.followShared();
      } catch (error) {
        if (this.stopped) break;
        await this.subscription?.close().catch(() => undefined);
        if (this.lossPending) {
          // Said by writesLost(), with its own backoff: a disk still full loses the next try too.
          this.lossPending = false;
          await this.pause(this.loss.delay);
          continue;
        }
        if (this.sharedPosition !== before) delay = this.retryDelayMs;
        this.log.error({ err: error, retryInMs: delay }, `the ${this.options.kind}s' subscription to the log failed; subscribing again from the checkpoints`);
        await this.pause(delay);
        delay = Math.min(delay * 2, this.maxRetryDelayMs);
      }
    }
  }

  private async followShared(): Promise<void> {
    const epoch = this.epoch;
    let from: Position | undefined = this.sharedPosition;
    let fromStart = false;
    for (const p of this.shared) {
      if (p.applied === undefined) fromStart = true;
      else if (from === undefined || p.applied < from) from = p.applied;
    }
    if (fromStart) from = undefined;
    this.sharedPosition = from;
    const subscription = this.options.events.subscribeToAll(from === undefined ? {} : { after: from });
    this.subscription = subscription;
    if (this.stopped) return subscription.close();
    for await (const batch of eventBatches(subscription, this.batchSize)) {
      this.sharedInProgress = batch[batch.length - 1]!.position;
      // In the subscribers' order, whichever are on the shared subscription when their turn comes: one
      // rejoins only once it has applied the whole batch in progress (see catchUp).
      for (const p of this.positions) {
        // The positions went back: this batch no longer follows them; subscribe again from them.
        if (this.epoch !== epoch) throw new ReadStoreWritesLost(this.lastLoss);
        if (!this.shared.has(p)) continue;
        if (!(await this.applyTo(p, batch))) {
          this.shared.delete(p);
          this.retryInTheBackground(p);
        }
      }
      this.sharedPosition = this.sharedInProgress;
      this.sharedInProgress = undefined;
      this.releaseWaiters();
      this.scheduleFlush();
      if (this.stopped) return;
    }
    if (!this.stopped) throw new Error(`The subscription to the log ended while the ${this.options.kind}s were running`);
  }

  /** Applies the batch's events the subscriber has not applied: false when a handler failed (recorded). */
  private async applyTo(p: SubscriberPosition<S>, batch: readonly StoredEvent[]): Promise<boolean> {
    const from = p.applied;
    const events = from === undefined ? batch : batch.filter((e) => e.position > from);
    if (events.length === 0) return true;
    // Taken with the positions the events were chosen by: a commit after they went back is refused.
    const epoch = this.epoch;
    try {
      await this.options.apply(p, events, (ops, position) => this.commit(p, ops, position, epoch));
    } catch (error) {
      const failure = error instanceof HandlerFailed ? error : this.blame(p, events, error);
      this.failed.failed(p.subscriber.name, failure.event, failure.cause);
      this.releaseWaiters();
      return false;
    }
    if (p.applied !== undefined) this.failed.passed(p.subscriber.name, p.applied);
    return true;
  }

  /** A failure no handler owns (storing the batch): reported on the first event the subscriber handles. */
  private blame(p: SubscriberPosition<S>, events: readonly StoredEvent[], error: unknown): HandlerFailed {
    const event = events.find((e) => (p.applied === undefined || p.applied < e.position) && p.subscriber.handles.has(e.type)) ?? events[0]!;
    return new HandlerFailed(event, error);
  }

  private commit(p: SubscriberPosition<S>, ops: readonly WriteOp[], position: Position | undefined, epoch: number): Promise<void> {
    const checkpoints: CheckpointWrite[] = position === undefined ? [] : [{ name: p.subscriber.checkpoint, position, store: this.identity }];
    const write = this.writes.then(async () => {
      // Checked in the same turn as the commit: a loss cannot come in between.
      if (this.epoch !== epoch) throw new ReadStoreWritesLost(this.lastLoss);
      await this.options.readStore.commit(ops, checkpoints);
      if (position === undefined) return;
      if (p.applied === undefined || p.applied < position) p.applied = position;
      if (p.stored === undefined || p.stored < position) p.stored = position;
    });
    this.writes = write.catch(() => undefined);
    return write;
  }

  /** Status writes go on the checkpoints' queue, in order. */
  private enqueue(write: () => Promise<void>): void {
    this.writes = this.writes.then(write);
  }

  /**
   * The read store lost writes it had taken: every subscriber goes back to its durable checkpoint,
   * at once (a flush must not store the positions it had reached), and the shared subscription
   * starts again from them. Applies in progress are refused their commit (see commit), and fail
   * their subscriber with this error, which is retried with backoff like a handler's: they resume
   * once there is room.
   */
  private writesLost(error: unknown, durable: ReadonlyMap<string, Position>): void {
    this.epoch += 1;
    this.lastLoss = error;
    this.lossPending = true;
    const now = Date.now();
    const again = now - this.loss.at < 2 * this.maxRetryDelayMs;
    this.loss = { at: now, delay: again ? Math.min(Math.max(this.loss.delay * 2, this.retryDelayMs), this.maxRetryDelayMs) : this.retryDelayMs };
    this.sharedInProgress = undefined;
    let lowest: Position | undefined;
    let fromStart = false;
    for (const p of this.positions) {
      const at = durable.get(p.subscriber.checkpoint);
      p.applied = at;
      p.stored = at;
      if (at === undefined) fromStart = true;
      else if (lowest === undefined || at < lowest) lowest = at;
    }
    // The shared subscription starts again from the lowest of them (not from the log's start when
    // every subscriber is retrying on its own).
    this.sharedPosition = fromStart ? undefined : lowest;
    this.log.error({ err: error, retryInMs: this.loss.delay }, `the read store lost its last writes; the ${this.options.kind}s go back to their stored checkpoints and apply the log again from there`);
    void this.subscription?.close().catch(() => undefined);
  }

  private retryInTheBackground(p: SubscriberPosition<S>): void {
    const retry = this.retry(p)
      .catch((error: unknown) => this.log.error({ err: error }, `retrying a failed ${this.options.kind} failed`))
      .finally(() => this.retries.delete(retry));
    this.retries.add(retry);
  }

  /**
   * Reads the log from the subscriber's own position until it has applied everything the shared
   * subscription has, then hands it back to it. A failure waits longer each time.
   */
  private async retry(p: SubscriberPosition<S>): Promise<void> {
    const name = p.subscriber.name;
    let delay = this.retryDelayMs;
    let retried: StoredEvent | undefined;
    while (!this.stopped) {
      const failedOn = this.failed.eventOf(name);
      // A failure on another event starts the backoff over.
      if (failedOn !== retried) delay = this.retryDelayMs;
      retried = failedOn;
      if (failedOn) {
        this.failed.scheduled(name, new Date(Date.now() + delay));
        await this.pause(delay);
        if (this.stopped) break;
      }
      try {
        if (await this.catchUp(p)) return;
      } catch (error) {
        if (this.stopped) break;
        this.log.error({ err: error, retryInMs: delay }, `reading the log for a ${this.options.kind} that is catching up failed`);
        await this.pause(delay);
      }
      if (this.failed.has(name)) delay = Math.min(delay * 2, this.maxRetryDelayMs);
    }
    this.failed.scheduled(name, null);
  }

  /** Applies the log from the subscriber's position: true once it is back on the shared subscription, false when a handler failed (again). */
  private async catchUp(p: SubscriberPosition<S>): Promise<boolean> {
    for (;;) {
      const epoch = this.epoch;
      const source = this.options.events.readAll(p.applied === undefined ? {} : { after: p.applied });
      for await (const batch of eventBatches(source, this.batchSize)) {
        if (this.stopped) return false;
        // The positions went back (see writesLost): read again from them.
        if (this.epoch !== epoch) break;
        if (!(await this.applyTo(p, batch))) return false;
        this.releaseWaiters();
      }
      if (this.stopped) return false;
      if (this.epoch !== epoch) continue;
      this.scheduleFlush();
      // No await between this check and the hand-over: the shared subscription brings it every
      // event after the batch in progress, and it skips those it has applied already.
      const sharedAt = this.sharedInProgress ?? this.sharedPosition;
      if (sharedAt === undefined || (p.applied !== undefined && p.applied >= sharedAt)) {
        this.shared.add(p);
        return true;
      }
    }
  }

  private async pause(ms: number): Promise<void> {
    await sleep(ms, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }

  private scheduleFlush(): void {
    if (this.flushTimer || !this.positions.some((p) => p.applied !== p.stored)) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flushCheckpoints();
    }, CHECKPOINT_FLUSH_MS);
    this.flushTimer.unref();
  }

  /**
   * Stores the checkpoints of subscribers moved past events they do not handle (replaying those is
   * harmless). On the commits' queue, with the positions of when its turn comes. A failed write is
   * logged and left for the next flush.
   */
  private async flushCheckpoints(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const write = this.writes.then(async () => {
      const moved = this.positions.filter((p) => p.applied !== undefined && p.applied !== p.stored).map((p) => [p, p.applied!] as const);
      if (moved.length === 0) return;
      try {
        await this.options.readStore.commit([], moved.map(([p, position]) => ({ name: p.subscriber.checkpoint, position, store: this.identity })));
        for (const [p, position] of moved) if (p.stored === undefined || p.stored < position) p.stored = position;
      } catch (error) {
        this.log.error({ err: error }, `storing ${this.options.kind} checkpoints failed; they are stored at the next flush`);
      }
    });
    this.writes = write.catch(() => undefined);
    await write;
  }
}
