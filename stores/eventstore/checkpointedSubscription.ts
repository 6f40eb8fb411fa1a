// One checkpointed subscription to the whole log, shared by the projection runner and the saga
// runner: it keeps each subscriber's checkpoint (with the log's identity), hands events over in
// batches, isolates a subscriber that fails on an event with those that share its documents (its
// lane), retries that lane with a doubling backoff from its own checkpoints, and reports the failure.
// It lives beside checkpoint.ts because both commands/ (sagas) and projections/ build on it; what a
// subscriber does with a batch (buffered writes, reactions) is its runner's `LaneApplier`.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { CheckpointWrite, ReadStore, WriteOp } from '../readstore/readStore';
import { loadCheckpoint } from './checkpoint';
import { eventBatches } from './eventBatches';
import type { EventStore, Position, StoredEvent, Subscription } from './eventStore';

export interface Subscriber {
  /** Names it in logs and reports, and in other subscribers' `follows`. */
  readonly name: string;
  /** The name of the checkpoint it keeps in the read store. */
  readonly checkpoint: string;
  readonly handles: ReadonlySet<string>;
  /** Subscribers that write a common collection share a lane: they apply the log in step. */
  readonly writes: ReadonlySet<string>;
  /** Subscribers it may lag behind but never pass (it waits while one of them is failed). */
  readonly follows: ReadonlySet<string>;
}

export interface LaneMember<S extends Subscriber> {
  readonly subscriber: S;
  /** Every event up to here is applied (or needs nothing); undefined before the first event. */
  applied: Position | undefined;
  /** The checkpoint last stored. */
  stored: Position | undefined;
}

/** A subscriber's handler threw on an event; everything before it in the batch is stored. */
export class HandlerFailed extends Error {
  constructor(
    readonly member: number,
    readonly event: StoredEvent,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'HandlerFailed';
  }
}

/**
 * The read store lost writes it had taken (a group commit that failed on a full disk): this batch's
 * are refused, and the lane applies the log again from the checkpoints that are durable.
 */
export class ReadStoreWritesLost extends Error {
  constructor(override readonly cause: unknown) {
    super(`the read store lost its last writes (${messageOf(cause)}); they are applied again from the stored checkpoints`);
    this.name = 'ReadStoreWritesLost';
  }
}

/** Stores ops and checkpoints, one commit at a time, so a checkpoint never moves backwards. */
export interface LaneCommit {
  /**
   * Commits `ops` with the members' new positions as checkpoints; on success the members are at
   * those positions (`applied` and `stored`). Without positions, it stores changes alone (a flush
   * before a direct write), which a redelivery makes good.
   */
  (ops: readonly WriteOp[], positions: readonly (readonly [LaneMember<Subscriber>, Position])[]): Promise<void>;
}

/**
 * What a runner does with a batch for one lane: applies `events` (in log order; each event to the
 * members in order, skipping those a member has applied already) and moves every member to the last
 * event, through `commit` for what it stores; a member moved only past events it does not handle
 * may just have `applied` set, and its checkpoint is flushed shortly after. A handler's failure is
 * thrown as HandlerFailed, after what came before it is committed; any other error leaves the batch
 * unapplied (retried later). A runner that is stopping may return before the end.
 */
export type LaneApplier<S extends Subscriber> = (members: readonly LaneMember<S>[], events: readonly StoredEvent[], commit: LaneCommit) => Promise<void>;

/** A subscriber stuck on one event, as reported (projection_status, /health, logs). */
export interface SubscriberFailure {
  name: string;
  /** Subscribers held at the same event until it passes: its lane's others and those following it. */
  heldBack: string[];
  /** The event's position in decimal (positions are 64-bit). */
  position: string;
  eventType: string;
  streamId: string;
  eventId: string;
  error: string;
  since: string;
  attempts: number;
  /** When it is tried again; null once the subscription stopped. */
  nextAttempt: string | null;
}

/** Where failures are kept for other processes; the in-memory state stays the authority here. */
export interface FailureRecord {
  load(): Promise<{ name: string; position: Position }[]>;
  store(failure: SubscriberFailure): Promise<void>;
  clear(name: string): Promise<void>;
}

export interface CheckpointedSubscriptionOptions<S extends Subscriber> {
  events: EventStore;
  readStore: ReadStore;
  subscribers: readonly S[];
  apply: LaneApplier<S>;
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

interface Failure<S extends Subscriber> {
  member: LaneMember<S>;
  event: StoredEvent;
  error: string;
  since: Date;
  attempts: number;
  nextAttempt: Date | null;
}

interface Lane<S extends Subscriber> {
  readonly members: readonly LaneMember<S>[];
  follows: Lane<S>[];
  failure: Failure<S> | undefined;
  /** Failures stored by an earlier run: reported until this run gets past their event. */
  stale: Map<string, Position>;
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

const CHECKPOINT_FLUSH_MS = 100;
/** How often a lane held back by one it follows looks whether it may go on. */
const FOLLOW_POLL_MS = 50;
export const DEFAULT_BATCH_SIZE = 500;

function lanesOf<S extends Subscriber>(subscribers: readonly S[]): Lane<S>[] {
  const groups: LaneMember<S>[][] = [];
  for (const subscriber of subscribers) {
    const member: LaneMember<S> = { subscriber, applied: undefined, stored: undefined };
    const joined = groups.filter((group) => group.some((m) => [...m.subscriber.writes].some((c) => subscriber.writes.has(c))));
    const merged = [...joined.flat(), member];
    for (const group of joined) groups.splice(groups.indexOf(group), 1);
    groups.push(merged);
  }
  const order = (m: LaneMember<S>) => subscribers.indexOf(m.subscriber);
  // Lanes, and members within them, keep the order of `subscribers`: the order handlers always ran in.
  const lanes: Lane<S>[] = groups
    .map((members) => [...members].sort((a, b) => order(a) - order(b)))
    .sort((a, b) => order(a[0]!) - order(b[0]!))
    .map((members) => ({ members, follows: [], failure: undefined, stale: new Map() }));
  const laneOf = (name: string) => lanes.find((l) => l.members.some((m) => m.subscriber.name === name));
  for (const lane of lanes) {
    for (const m of lane.members) {
      for (const name of m.subscriber.follows) {
        const followed = laneOf(name);
        if (!followed) throw new Error(`${m.subscriber.name} follows ${name}, which does not run here`);
        if (followed !== lane && !lane.follows.includes(followed)) lane.follows.push(followed);
      }
    }
  }
  // A lane comes after those it follows, so that they have applied a batch before it does.
  const ordered: Lane<S>[] = [];
  while (ordered.length < lanes.length) {
    const next = lanes.find((l) => !ordered.includes(l) && l.follows.every((f) => ordered.includes(f)));
    if (!next) throw new Error('Subscribers follow each other in a cycle');
    ordered.push(next);
  }
  return ordered;
}

const laneApplied = <S extends Subscriber>(lane: Lane<S>): Position | undefined => {
  let lowest: Position | undefined;
  for (const m of lane.members) {
    if (m.applied === undefined) return undefined;
    if (lowest === undefined || m.applied < lowest) lowest = m.applied;
  }
  return lowest;
};


/**
 * Feeds subscribers from one subscription to the whole log, each with its own checkpoint.
 *
 * A subscriber whose handler fails on an event is isolated, with its lane: the others go on with
 * the shared subscription. The failure is logged once at error level and reported by `failures()`
 * (and the FailureRecord) with the event's position, type and stream. The lane is retried from its
 * own positions with a backoff (`retryDelayMs` doubling up to `maxRetryDelayMs`), so a transient
 * fault heals itself and a fixed handler resumes at the event it failed on; nothing is ever
 * skipped. Once past it, the lane reads the log on its own until it has caught up, then rejoins the
 * shared subscription.
 *
 * Waits (`waitFor`) leave failed lanes out: a write whose own read model is failed answers once
 * the healthy ones have applied it.
 */
export class CheckpointedSubscription<S extends Subscriber> {
  private readonly lanes: Lane<S>[];
  /** Lanes fed by the shared subscription; the others are failed or catching up on their own. */
  private readonly shared = new Set<Lane<S>>();
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
  private applying: Promise<void> = Promise.resolve();
  /** Checkpoint and status writes, one at a time and in order. */
  private writes: Promise<void> = Promise.resolve();
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
    this.lanes = lanesOf(options.subscribers);
    this.retryDelayMs = options.retryDelayMs ?? 1000;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 60_000;
    this.batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    this.log = options.log;
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
      for (const lane of this.lanes) {
        for (const m of lane.members) {
          m.applied = await loadCheckpoint(readStore, m.subscriber.checkpoint, events);
          m.stored = m.applied;
        }
      }
    } catch (error) {
      this.log.error({ err: error }, `the ${this.options.kind}s cannot start from their stored checkpoints`);
      throw error;
    }
    for (const lane of this.lanes) this.shared.add(lane);
    this.stopListening = readStore.onCommitLost?.((error, durable) => this.writesLost(error, durable));
    await this.loadStoredFailures();
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
    for (const lane of this.lanes) {
      if (this.stalled(lane)) continue;
      const applied = laneApplied(lane);
      if (applied === undefined) return undefined;
      if (lowest === undefined || applied < lowest) lowest = applied;
    }
    return lowest;
  }

  failures(): SubscriberFailure[] {
    return this.lanes.flatMap((lane) => (lane.failure ? [this.describe(lane, lane.failure)] : []));
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
    return this.lanes.every((lane) => {
      if (this.stalled(lane)) return true;
      const applied = laneApplied(lane);
      return applied !== undefined && applied >= position;
    });
  }

  /** Failed, or following a lane that is. */
  private stalled(lane: Lane<S>): boolean {
    return lane.failure !== undefined || lane.follows.some((l) => this.stalled(l));
  }

  private followers(lane: Lane<S>): Lane<S>[] {
    const direct = this.lanes.filter((l) => l.follows.includes(lane));
    return [...new Set([...direct, ...direct.flatMap((l) => this.followers(l))])];
  }

  /** A lane it follows has not applied `position` yet. */
  private mustWait(lane: Lane<S>, position: Position): boolean {
    // Asked for every event of a batch: loops, not closures.
    for (const l of lane.follows) {
      const applied = laneApplied(l);
      if (applied === undefined || applied < position || this.mustWait(l, position)) return true;
    }
    return false;
  }

  private releaseWaiters(): void {
    const ready = this.waiters.filter((w) => this.caughtUp(w.position));
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve(true);
  }

  /** Only the event store can fail here (handlers' faults stay in their lanes): subscribe again. */
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
    for (const lane of this.shared) {
      const applied = laneApplied(lane);
      if (applied === undefined) fromStart = true;
      else if (from === undefined || applied < from) from = applied;
    }
    if (fromStart) from = undefined;
    this.sharedPosition = from;
    const subscription = this.options.events.subscribeToAll(from === undefined ? {} : { after: from });
    this.subscription = subscription;
    if (this.stopped) return subscription.close();
    for await (const batch of eventBatches(subscription, this.batchSize)) {
      this.sharedInProgress = batch[batch.length - 1]!.position;
      // In the lanes' order, whichever are on the shared subscription when their turn comes: a lane
      // rejoins only once it has applied the whole batch in progress (see catchUp).
      for (const lane of this.lanes) {
        // The positions went back: this batch no longer follows them; subscribe again from them.
        if (this.epoch !== epoch) throw new ReadStoreWritesLost(this.lastLoss);
        if (!this.shared.has(lane)) continue;
        const outcome = await this.applyToLane(lane, batch);
        if (outcome !== 'applied') {
          this.shared.delete(lane);
          this.retryInTheBackground(lane);
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

  /**
   * Applies the batch's events the lane may apply now (up to the first one a lane it follows has
   * not applied): 'applied' when that was all of them, 'waiting' when it must wait, 'failed' when a
   * handler failed (recorded).
   */
  private async applyToLane(lane: Lane<S>, batch: readonly StoredEvent[]): Promise<'applied' | 'waiting' | 'failed'> {
    const from = laneApplied(lane);
    let events = from === undefined ? batch : batch.filter((e) => e.position > from);
    let waitAt = -1;
    if (lane.follows.length > 0) {
      for (let i = 0; i < events.length; i++) {
        if (this.mustWait(lane, events[i]!.position)) {
          waitAt = i;
          break;
        }
      }
    }
    if (waitAt >= 0) events = events.slice(0, waitAt);
    if (events.length > 0) {
      // Taken with the positions the events were chosen by: a commit after they went back is refused.
      const epoch = this.epoch;
      try {
        await this.oneLaneAtATime(() => this.options.apply(lane.members, events, (ops, positions) => this.commit(ops, positions, epoch)));
      } catch (error) {
        const failure = error instanceof HandlerFailed ? error : this.blame(lane, events, error);
        this.failed(lane, lane.members[failure.member]!, failure.event, failure.cause);
        return 'failed';
      }
      const reached = laneApplied(lane);
      if (reached !== undefined) this.passed(lane, reached);
    }
    return waitAt >= 0 ? 'waiting' : 'applied';
  }

  /**
   * Lanes apply their batches one at a time, the shared subscription's and those catching up alike:
   * a follower may write documents of the lane it follows, and a batch that read such a document
   * must store it before the other lane writes it again.
   */
  private oneLaneAtATime(apply: () => Promise<void>): Promise<void> {
    const run = this.applying.then(apply);
    this.applying = run.catch(() => undefined);
    return run;
  }

  /** A failure no handler owns (storing the batch): reported on the first event a member handles. */
  private blame(lane: Lane<S>, events: readonly StoredEvent[], error: unknown): HandlerFailed {
    for (const event of events) {
      const member = lane.members.findIndex((m) => (m.applied === undefined || m.applied < event.position) && m.subscriber.handles.has(event.type));
      if (member >= 0) return new HandlerFailed(member, event, error);
    }
    return new HandlerFailed(0, events[0]!, error);
  }

  private commit(ops: readonly WriteOp[], positions: readonly (readonly [LaneMember<Subscriber>, Position])[], epoch: number): Promise<void> {
    const checkpoints: CheckpointWrite[] = positions.map(([m, position]) => ({ name: m.subscriber.checkpoint, position, store: this.identity }));
    const write = this.writes.then(async () => {
      // Checked in the same turn as the commit: a loss cannot come in between.
      if (this.epoch !== epoch) throw new ReadStoreWritesLost(this.lastLoss);
      await this.options.readStore.commit(ops, checkpoints);
      for (const [m, position] of positions) {
        if (m.applied === undefined || m.applied < position) m.applied = position;
        if (m.stored === undefined || m.stored < position) m.stored = position;
      }
    });
    this.writes = write.catch(() => undefined);
    return write;
  }

  /**
   * The read store lost writes it had taken: every member goes back to its durable checkpoint, at
   * once (a flush must not store the positions it had reached), and the shared subscription starts
   * again from them. Applies in progress are refused their commit (see commit), and fail their lane
   * with this error, which is retried with backoff like a handler's: they resume once there is room.
   */
  private writesLost(error: unknown, durable: ReadonlyMap<string, Position>): void {
    this.epoch += 1;
    this.lastLoss = error;
    this.lossPending = true;
    const now = Date.now();
    const again = now - this.loss.at < 2 * this.maxRetryDelayMs;
    this.loss = { at: now, delay: again ? Math.min(Math.max(this.loss.delay * 2, this.retryDelayMs), this.maxRetryDelayMs) : this.retryDelayMs };
    this.sharedInProgress = undefined;
    for (const lane of this.lanes) {
      for (const m of lane.members) {
        const at = durable.get(m.subscriber.checkpoint);
        m.applied = at;
        m.stored = at;
      }
    }
    // The shared subscription starts again from the lowest of them (not from the log's start when
    // every lane is retrying on its own).
    let lowest: Position | undefined;
    let fromStart = false;
    for (const lane of this.lanes) {
      const applied = laneApplied(lane);
      if (applied === undefined) fromStart = true;
      else if (lowest === undefined || applied < lowest) lowest = applied;
    }
    this.sharedPosition = fromStart ? undefined : lowest;
    this.log.error({ err: error, retryInMs: this.loss.delay }, `the read store lost its last writes; the ${this.options.kind}s go back to their stored checkpoints and apply the log again from there`);
    void this.subscription?.close().catch(() => undefined);
  }

  private failed(lane: Lane<S>, member: LaneMember<S>, event: StoredEvent, error: unknown): void {
    const { kind } = this.options;
    const name = member.subscriber.name;
    const again = lane.failure?.member === member && lane.failure.event.position === event.position;
    if (again && lane.failure) {
      lane.failure.attempts += 1;
      lane.failure.error = messageOf(error);
      this.log.debug({ [kind]: name, position: event.position.toString(), attempts: lane.failure.attempts, err: error }, `${kind} failed again on the same event`);
    } else {
      lane.failure = { member, event, error: messageOf(error), since: new Date(), attempts: 1, nextAttempt: null };
      // Once per failure, not at every retry: the report (failures(), /health) carries the rest.
      this.log.error(
        { [kind]: name, heldBack: this.heldBack(lane, member), position: event.position.toString(), eventType: event.type, streamId: event.streamId, eventId: event.id, err: error },
        `${kind} ${name} failed on event ${event.position} (${event.type} in ${event.streamId}); it is stalled there and retried with backoff, the others go on`,
      );
    }
    this.releaseWaiters();
  }

  /** The lane has applied `position`: a failure at or before it is over. */
  private passed(lane: Lane<S>, position: Position): void {
    const failure = lane.failure;
    if (failure && position >= failure.event.position) {
      lane.failure = undefined;
      const name = failure.member.subscriber.name;
      this.log.warn(
        { [this.options.kind]: name, position: failure.event.position.toString(), attempts: failure.attempts },
        `${this.options.kind} ${name} got past event ${failure.event.position}; it catches up`,
      );
      this.forgetStoredFailure(name);
    }
    for (const [name, at] of lane.stale) {
      if (position < at) continue;
      lane.stale.delete(name);
      if (!failure || failure.member.subscriber.name !== name) this.forgetStoredFailure(name);
    }
  }

  private retryInTheBackground(lane: Lane<S>): void {
    const retry = this.retry(lane)
      .catch((error: unknown) => this.log.error({ err: error }, `retrying a failed ${this.options.kind} failed`))
      .finally(() => this.retries.delete(retry));
    this.retries.add(retry);
  }

  /**
   * Reads the log from the lane's own positions until it has applied everything the shared
   * subscription has, then hands the lane back to it. A failure waits longer each time.
   */
  private async retry(lane: Lane<S>): Promise<void> {
    let delay = this.retryDelayMs;
    let retried: Failure<S> | undefined;
    while (!this.stopped) {
      const failure = lane.failure;
      // A failure on another event starts the backoff over.
      if (failure !== retried) delay = this.retryDelayMs;
      retried = failure;
      if (failure) {
        failure.nextAttempt = new Date(Date.now() + delay);
        this.recordFailure(lane);
        await this.pause(delay);
        if (this.stopped) break;
      }
      let waiting = false;
      try {
        const outcome = await this.catchUp(lane);
        if (outcome === 'rejoined') return;
        waiting = outcome === 'waiting';
      } catch (error) {
        if (this.stopped) break;
        this.log.error({ err: error, retryInMs: delay }, `reading the log for a ${this.options.kind} that is catching up failed`);
        await this.pause(delay);
      }
      if (lane.failure) delay = Math.min(delay * 2, this.maxRetryDelayMs);
      // Held back by a lane it follows: look again shortly, without backing off.
      else if (waiting) await this.pause(FOLLOW_POLL_MS);
    }
    if (lane.failure) {
      lane.failure.nextAttempt = null;
      this.recordFailure(lane);
    }
  }

  /**
   * Applies the log from the lane's positions: 'rejoined' once the lane is back on the shared
   * subscription, 'failed' when a handler failed (again), 'waiting' when a lane it follows has not
   * got that far yet.
   */
  private async catchUp(lane: Lane<S>): Promise<'rejoined' | 'failed' | 'waiting'> {
    for (;;) {
      if (lane.follows.some((l) => this.stalled(l))) return 'waiting';
      const epoch = this.epoch;
      const after = laneApplied(lane);
      let waiting = false;
      const source = this.options.events.readAll(after === undefined ? {} : { after });
      for await (const batch of eventBatches(source, this.batchSize)) {
        if (this.stopped) return 'failed';
        // The positions went back (see writesLost): read again from them.
        if (this.epoch !== epoch) break;
        const outcome = await this.applyToLane(lane, batch);
        if (outcome === 'failed') return 'failed';
        this.releaseWaiters();
        if (outcome === 'waiting') {
          waiting = true;
          break;
        }
      }
      if (this.stopped) return 'failed';
      if (this.epoch !== epoch) continue;
      this.scheduleFlush();
      // No await between this check and the hand-over: the shared subscription brings the lane
      // every event after the batch in progress, and the lane skips those it has applied already.
      const applied = laneApplied(lane);
      const sharedAt = this.sharedInProgress ?? this.sharedPosition;
      if (lane.follows.every((l) => this.shared.has(l)) && (sharedAt === undefined || (applied !== undefined && applied >= sharedAt))) {
        this.shared.add(lane);
        return 'rejoined';
      }
      if (waiting || lane.follows.some((l) => !this.shared.has(l))) return 'waiting';
    }
  }

  private heldBack(lane: Lane<S>, member: LaneMember<S>): string[] {
    const others = lane.members.filter((m) => m !== member);
    return [...others, ...this.followers(lane).flatMap((l) => l.members)].map((m) => m.subscriber.name);
  }

  private describe(lane: Lane<S>, failure: Failure<S>): SubscriberFailure {
    const { event } = failure;
    return {
      name: failure.member.subscriber.name,
      heldBack: this.heldBack(lane, failure.member),
      position: event.position.toString(),
      eventType: event.type,
      streamId: event.streamId,
      eventId: event.id,
      error: failure.error,
      since: failure.since.toISOString(),
      attempts: failure.attempts,
      nextAttempt: failure.nextAttempt?.toISOString() ?? null,
    };
  }

  private recordFailure(lane: Lane<S>): void {
    const record = this.options.failures;
    if (!lane.failure || !record) return;
    const failure = this.describe(lane, lane.failure);
    this.statusWrite(() => record.store(failure));
  }

  private forgetStoredFailure(name: string): void {
    const record = this.options.failures;
    if (record) this.statusWrite(() => record.clear(name));
  }

  /** Status writes go on the checkpoints' queue, in order; a failed one is logged. */
  private statusWrite(write: () => Promise<void>): void {
    this.writes = this.writes.then(write).catch((error: unknown) => this.log.error({ err: error }, `storing the ${this.options.kind}s' status failed`));
  }

  private async loadStoredFailures(): Promise<void> {
    const stored = (await this.options.failures?.load()) ?? [];
    for (const failure of stored) {
      const lane = this.lanes.find((l) => l.members.some((m) => m.subscriber.name === failure.name));
      if (lane) lane.stale.set(failure.name, failure.position);
    }
    for (const lane of this.lanes) {
      const applied = laneApplied(lane);
      if (applied !== undefined) this.passed(lane, applied);
    }
  }

  private async pause(ms: number): Promise<void> {
    await sleep(ms, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }

  private scheduleFlush(): void {
    if (this.flushTimer || !this.lanes.some((l) => l.members.some((m) => m.applied !== m.stored))) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flushCheckpoints();
    }, CHECKPOINT_FLUSH_MS);
    this.flushTimer.unref();
  }

  /**
   * Stores the checkpoints of members moved past events they do not handle (replaying those is
   * harmless). On the commits' queue, with the positions of when its turn comes. A failed write is
   * logged and left for the next flush.
   */
  private async flushCheckpoints(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const write = this.writes.then(async () => {
      const moved = this.lanes.flatMap((l) => l.members).filter((m) => m.applied !== undefined && m.applied !== m.stored);
      if (moved.length === 0) return;
      const positions = moved.map((m) => [m, m.applied!] as const);
      try {
        await this.options.readStore.commit([], positions.map(([m, position]) => ({ name: m.subscriber.checkpoint, position, store: this.identity })));
        for (const [m, position] of positions) if (m.stored === undefined || m.stored < position) m.stored = position;
      } catch (error) {
        this.log.error({ err: error }, `storing ${this.options.kind} checkpoints failed; they are stored at the next flush`);
      }
    });
    this.writes = write.catch(() => undefined);
    await write;
  }
}
