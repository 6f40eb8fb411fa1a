import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { loadCheckpoint, storeCheckpoint } from '../stores/eventstore/checkpoint';
import type { EventStore, Position, StoredEvent, Subscription } from '../stores/eventstore/eventStore';
import type { ReadStore } from '../stores/readstore/readStore';
import type { Projection } from './projection';
import { clearFailure, stalledProjections, storeFailure, StoredProjectionStatus, type ProjectionFailure, type ProjectionHealth } from './projectionStatus';

/** Lets a command's response wait until the read models have applied its events. */
export interface ReadModelSync {
  /** Resolves true once every projection has applied `position`, false when `timeoutMs` passed first. */
  waitFor(position: Position, timeoutMs: number): Promise<boolean>;
}

/**
 * Read your writes for an answer: waits until the read models have applied `position`, bounded by
 * `timeoutMs`. Past it the answer goes anyway (the write is durable) and the delay is logged. A
 * command that decided nothing has no position, and nothing to wait for.
 */
export function settler(sync: ReadModelSync, timeoutMs: number, log: Logger): (position: Position | undefined) => Promise<void> {
  return async (position) => {
    if (position === undefined) return;
    if (!(await sync.waitFor(position, timeoutMs))) log.warn({ position: position.toString() }, 'read models did not catch up before the answer');
  };
}

interface Waiter {
  position: Position;
  resolve(caughtUp: boolean): void;
}

const CHECKPOINT_FLUSH_MS = 100;
/** How often a lane held back by one it follows looks whether it may go on. */
const FOLLOW_POLL_MS = 50;

interface Member {
  readonly projection: Projection;
  /** Every event up to here is applied (or needs nothing): the checkpoint to store. */
  applied: Position | undefined;
}

interface Failure {
  member: Member;
  event: StoredEvent;
  error: string;
  since: Date;
  attempts: number;
  nextAttempt: Date | null;
}

/**
 * The unit of isolation: projections that write a common collection share documents guarded by one
 * `_position`, so they must apply the log in step (one lagging behind would have its guarded writes
 * dropped). A lane is such a group; it fails, retries and recovers as one. A lane whose projections
 * follow another lane's (`Projection.follows`) may lag behind that lane but never pass it.
 */
interface Lane {
  readonly members: readonly Member[];
  /** The lanes it must not pass. */
  follows: Lane[];
  failure: Failure | undefined;
  /** Failures stored by an earlier run: reported until this run gets past their event. */
  stale: Map<string, Position>;
}

function lanesOf(projections: readonly Projection[]): Lane[] {
  const groups: Member[][] = [];
  for (const projection of projections) {
    const member: Member = { projection, applied: undefined };
    const joined = groups.filter((group) => group.some((m) => [...m.projection.writes].some((c) => projection.writes.has(c))));
    const merged = [...joined.flat(), member];
    for (const group of joined) groups.splice(groups.indexOf(group), 1);
    groups.push(merged);
  }
  const order = (m: Member) => projections.indexOf(m.projection);
  // Lanes, and members within them, keep the order of `projections`: the order handlers always ran in.
  const lanes: Lane[] = groups
    .map((members) => [...members].sort((a, b) => order(a) - order(b)))
    .sort((a, b) => order(a[0]!) - order(b[0]!))
    .map((members) => ({ members, follows: [], failure: undefined, stale: new Map() }));
  const laneOf = (name: string) => lanes.find((l) => l.members.some((m) => m.projection.name === name));
  for (const lane of lanes) {
    for (const m of lane.members) {
      for (const name of m.projection.follows) {
        const followed = laneOf(name);
        if (!followed) throw new Error(`Projection ${m.projection.name} follows ${name}, which does not run here`);
        if (followed !== lane && !lane.follows.includes(followed)) lane.follows.push(followed);
      }
    }
  }
  // A lane comes after those it follows, so that within an event they have applied it first.
  const ordered: Lane[] = [];
  while (ordered.length < lanes.length) {
    const next = lanes.find((l) => !ordered.includes(l) && l.follows.every((f) => ordered.includes(f)));
    if (!next) throw new Error('Projections follow each other in a cycle');
    ordered.push(next);
  }
  return ordered;
}

const laneApplied = (lane: Lane): Position | undefined => {
  let lowest: Position | undefined;
  for (const m of lane.members) {
    if (m.applied === undefined) return undefined;
    if (lowest === undefined || m.applied < lowest) lowest = m.applied;
  }
  return lowest;
};

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Runs projections over one subscription to the whole log, each with its own checkpoint: stored
 * right after a handler succeeds, and for events it does not handle, flushed shortly after
 * (replaying those is harmless).
 *
 * A projection whose handler fails on an event is isolated, with the projections that share its
 * documents (its lane): the others go on with the shared subscription. The failure is logged once
 * at error level and reported by `failures()` and in the read store (projection_status), with the
 * event's position, type and stream. The lane is retried from its own checkpoints with a backoff
 * (`retryDelayMs` doubling up to `maxRetryDelayMs`), so a transient fault heals itself and a fixed
 * handler resumes at the event it failed on; nothing is ever skipped. Once past it, the lane reads
 * the log on its own until it has caught up, then rejoins the shared subscription.
 *
 * Read your writes waits (`waitFor`, and so `start()`) leave failed lanes out: a write whose own
 * read model is failed is durable and answers once the healthy read models have applied it; its
 * own read model shows it when the failure is fixed, and /health reports the failure meanwhile.
 */
export class ProjectionRunner implements ReadModelSync, ProjectionHealth {
  private readonly lanes: Lane[];
  /** Lanes fed by the shared subscription; the others are failed or catching up on their own. */
  private readonly shared = new Set<Lane>();
  /** The shared subscription has been through every event up to here. */
  private sharedPosition: Position | undefined;
  /** The event the shared subscription is going through, if any. */
  private sharedInProgress: Position | undefined;
  private readonly dirty = new Set<Member>();
  private waiters: Waiter[] = [];
  private subscription: Subscription | undefined;
  private stopped = false;
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly retries = new Set<Promise<void>>();
  private flushTimer: NodeJS.Timeout | undefined;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly events: EventStore,
    private readonly readStore: ReadStore,
    projections: readonly Projection[],
    private readonly log: Logger,
    private readonly retryDelayMs = 1000,
    private readonly maxRetryDelayMs = 60_000,
  ) {
    this.lanes = lanesOf(projections);
  }

  /**
   * Starts the run and resolves once the read models have caught up with the log as it was at the
   * call; a projection that fails on the way does not hold it up (see `failures()`).
   */
  async start(): Promise<void> {
    const head = await this.events.headPosition();
    try {
      for (const lane of this.lanes) {
        for (const m of lane.members) m.applied = await this.loadCheckpoint(m.projection.name);
        this.shared.add(lane);
      }
    } catch (error) {
      // A checkpoint of another log (ForeignCheckpointError) is a misconfiguration, not a bad event:
      // applying this log on top of it would mix two histories, so the start stops, saying why.
      this.log.error({ err: error }, 'the projections cannot start from their stored checkpoints');
      throw error;
    }
    await this.loadStoredFailures();
    this.loop = this.followSharedUntilStopped();
    if (head !== undefined) await this.waitFor(head, Number.POSITIVE_INFINITY);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    await this.subscription?.close();
    await this.loop;
    await Promise.all([...this.retries]);
    await this.flushCheckpoints();
    for (const w of this.waiters) w.resolve(false);
    this.waiters = [];
  }

  /** The position every healthy projection has applied, or undefined before the first event. */
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

  async failures(): Promise<ProjectionFailure[]> {
    return this.lanes.flatMap((lane) => (lane.failure ? [this.describe(lane, lane.failure)] : []));
  }

  waitFor(position: Position, timeoutMs: number): Promise<boolean> {
    if (this.caughtUp(position)) return Promise.resolve(true);
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

  /** Every projection that is not failed (nor held back by one that is) has applied `position`. */
  private caughtUp(position: Position): boolean {
    return this.lanes.every((lane) => {
      if (this.stalled(lane)) return true;
      const applied = laneApplied(lane);
      return applied !== undefined && applied >= position;
    });
  }

  /** Failed, or following a lane that is: its read models wait for that failure to pass. */
  private stalled(lane: Lane): boolean {
    return lane.failure !== undefined || lane.follows.some((l) => this.stalled(l));
  }

  /** The lanes that must wait while `lane` is failed: those following it, directly or not. */
  private followers(lane: Lane): Lane[] {
    const direct = this.lanes.filter((l) => l.follows.includes(lane));
    return [...new Set([...direct, ...direct.flatMap((l) => this.followers(l))])];
  }

  /** A lane it follows has not applied `position` yet. */
  private mustWait(lane: Lane, position: Position): boolean {
    return lane.follows.some((l) => {
      const applied = laneApplied(l);
      return applied === undefined || applied < position || this.mustWait(l, position);
    });
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
        if (this.sharedPosition !== before) delay = this.retryDelayMs;
        this.log.error({ err: error, retryInMs: delay }, 'the projections\' subscription to the log failed; subscribing again from the checkpoints');
        await this.subscription?.close().catch(() => undefined);
        await this.pause(delay);
        delay = Math.min(delay * 2, this.maxRetryDelayMs);
      }
    }
  }

  private async followShared(): Promise<void> {
    let from: Position | undefined = this.sharedPosition;
    let fromStart = false;
    for (const lane of this.shared) {
      const applied = laneApplied(lane);
      if (applied === undefined) fromStart = true;
      else if (from === undefined || applied < from) from = applied;
    }
    if (fromStart) from = undefined;
    this.sharedPosition = from;
    const subscription = this.events.subscribeToAll(from === undefined ? {} : { after: from });
    this.subscription = subscription;
    if (this.stopped) return subscription.close();
    for await (const event of subscription) {
      this.sharedInProgress = event.position;
      // In the lanes' order, whichever are on the shared subscription when their turn comes: a lane
      // rejoins only once it has applied the event in progress (see catchUp).
      for (const lane of this.lanes) {
        if (!this.shared.has(lane)) continue;
        if (this.mustWait(lane, event.position) || !(await this.applyToLane(lane, event))) {
          this.shared.delete(lane);
          this.retryInTheBackground(lane);
        }
      }
      this.sharedPosition = event.position;
      this.sharedInProgress = undefined;
      this.releaseWaiters();
      this.scheduleFlush();
      if (this.stopped) return;
    }
    if (!this.stopped) throw new Error('The subscription to the log ended while the projections were running');
  }

  /** Applies `event` to every member that has not yet; false when a handler failed (recorded). */
  private async applyToLane(lane: Lane, event: StoredEvent): Promise<boolean> {
    for (const member of lane.members) {
      if (member.applied !== undefined && event.position <= member.applied) continue;
      if (member.projection.handles.has(event.type)) {
        try {
          await member.projection.apply(event, this.readStore);
        } catch (error) {
          this.failed(lane, member, event, error);
          return false;
        }
        member.applied = event.position;
        await this.persist([member]);
      } else {
        member.applied = event.position;
        this.dirty.add(member);
      }
    }
    this.passed(lane, event.position);
    return true;
  }

  private failed(lane: Lane, member: Member, event: StoredEvent, error: unknown): void {
    const again = lane.failure?.member === member && lane.failure.event.position === event.position;
    if (again && lane.failure) {
      lane.failure.attempts += 1;
      lane.failure.error = messageOf(error);
      this.log.debug({ projection: member.projection.name, position: event.position.toString(), attempts: lane.failure.attempts, err: error }, 'projection failed again on the same event');
    } else {
      lane.failure = { member, event, error: messageOf(error), since: new Date(), attempts: 1, nextAttempt: null };
      // Once per failure, not at every retry: the report (failures(), /health) carries the rest.
      this.log.error(
        { projection: member.projection.name, heldBack: this.heldBack(lane, member), position: event.position.toString(), eventType: event.type, streamId: event.streamId, eventId: event.id, err: error },
        `projection ${member.projection.name} failed on event ${event.position} (${event.type} in ${event.streamId}); its read model is stalled there and retried with backoff, the others go on`,
      );
    }
    // Its read models no longer hold up read-your-writes waits.
    this.releaseWaiters();
  }

  /** The lane has applied `position`: a failure at or before it is over. */
  private passed(lane: Lane, position: Position): void {
    const failure = lane.failure;
    if (failure && position >= failure.event.position) {
      lane.failure = undefined;
      this.log.warn(
        { projection: failure.member.projection.name, position: failure.event.position.toString(), attempts: failure.attempts },
        `projection ${failure.member.projection.name} got past event ${failure.event.position}; its read model catches up`,
      );
      this.forgetStoredFailure(failure.member.projection.name);
    }
    for (const [name, at] of lane.stale) {
      if (position < at) continue;
      lane.stale.delete(name);
      if (!failure || failure.member.projection.name !== name) this.forgetStoredFailure(name);
    }
  }

  private retryInTheBackground(lane: Lane): void {
    const retry = this.retry(lane)
      .catch((error: unknown) => this.log.error({ err: error }, 'retrying a failed projection failed'))
      .finally(() => this.retries.delete(retry));
    this.retries.add(retry);
  }

  /**
   * Reads the log from the lane's own checkpoints until it has applied everything the shared
   * subscription has, then hands the lane back to it. A failure waits longer each time.
   */
  private async retry(lane: Lane): Promise<void> {
    let delay = this.retryDelayMs;
    let retried: Failure | undefined;
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
        this.log.error({ err: error, retryInMs: delay }, 'reading the log for a projection that is catching up failed');
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
   * Applies the log from the lane's checkpoints: 'rejoined' once the lane is back on the shared
   * subscription, 'failed' when a handler failed (again), 'waiting' when a lane it follows has not
   * got that far yet.
   */
  private async catchUp(lane: Lane): Promise<'rejoined' | 'failed' | 'waiting'> {
    for (;;) {
      if (lane.follows.some((l) => this.stalled(l))) return 'waiting';
      const after = laneApplied(lane);
      let waiting = false;
      for await (const event of this.events.readAll(after === undefined ? {} : { after })) {
        if (this.stopped) return 'failed';
        if (this.mustWait(lane, event.position)) {
          waiting = true;
          break;
        }
        if (!(await this.applyToLane(lane, event))) return 'failed';
        this.releaseWaiters();
      }
      if (this.stopped) return 'failed';
      this.scheduleFlush();
      // No await between this check and the hand-over: the shared subscription brings the lane
      // every event after the one in progress, and the lane skips those it has applied already.
      const applied = laneApplied(lane);
      const sharedAt = this.sharedInProgress ?? this.sharedPosition;
      if (lane.follows.every((l) => this.shared.has(l)) && (sharedAt === undefined || (applied !== undefined && applied >= sharedAt))) {
        this.shared.add(lane);
        return 'rejoined';
      }
      if (waiting || lane.follows.some((l) => !this.shared.has(l))) return 'waiting';
    }
  }

  private heldBack(lane: Lane, member: Member): string[] {
    const others = lane.members.filter((m) => m !== member);
    return [...others, ...this.followers(lane).flatMap((l) => l.members)].map((m) => m.projection.name);
  }

  private describe(lane: Lane, failure: Failure): ProjectionFailure {
    const { event } = failure;
    return {
      projection: failure.member.projection.name,
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

  /** For processes that do not run the projections; the in-memory state stays the authority here. */
  private recordFailure(lane: Lane): void {
    if (!lane.failure) return;
    const failure = this.describe(lane, lane.failure);
    this.statusWrite(() => storeFailure(this.readStore, failure));
  }

  private forgetStoredFailure(projection: string): void {
    this.statusWrite(() => clearFailure(this.readStore, projection));
  }

  /** Status writes go one at a time, in order, on the checkpoints' queue; a failed one is logged. */
  private statusWrite(write: () => Promise<void>): void {
    this.writes = this.writes
      .then(write)
      .catch((error: unknown) => this.log.error({ err: error }, 'storing the projections\' status failed'));
  }

  private async loadStoredFailures(): Promise<void> {
    const stored = await new StoredProjectionStatus(this.readStore).failures();
    for (const failure of stored) {
      const lane = this.lanes.find((l) => l.members.some((m) => m.projection.name === failure.projection));
      if (lane) lane.stale.set(failure.projection, BigInt(failure.position));
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
    if (this.flushTimer || this.dirty.size === 0) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flushCheckpoints();
    }, CHECKPOINT_FLUSH_MS);
    this.flushTimer.unref();
  }

  private async flushCheckpoints(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    await this.persist([...this.dirty]);
  }

  private loadCheckpoint(name: string): Promise<Position | undefined> {
    return loadCheckpoint(this.readStore, name, this.events);
  }

  /**
   * Stores checkpoints one write at a time, each with the latest applied position when its turn
   * comes: a flush and the loop never overlap, so a stored checkpoint never moves backwards. A
   * write that fails is logged and left for the next flush: the read models are applied already.
   */
  private persist(members: readonly Member[]): Promise<void> {
    const write = this.writes.then(async () => {
      for (const member of members) {
        this.dirty.delete(member);
        const checkpoint = member.applied;
        if (checkpoint === undefined) continue;
        try {
          await storeCheckpoint(this.readStore, member.projection.name, checkpoint, this.events);
        } catch (error) {
          this.dirty.add(member);
          this.log.error({ err: error, projection: member.projection.name }, 'storing a projection checkpoint failed; it is stored at the next flush');
        }
      }
    });
    this.writes = write.catch(() => undefined);
    return write;
  }
}

/**
 * Read-your-writes for a process that serves the API without running the projections itself
 * (ROLES split): polls the checkpoints the projection process stores in the shared read store.
 */
export class CheckpointPoller implements ReadModelSync {
  private readonly status: StoredProjectionStatus;

  constructor(
    private readonly readStore: ReadStore,
    private readonly projectionNames: readonly string[],
    private readonly intervalMs = 20,
  ) {
    this.status = new StoredProjectionStatus(readStore);
  }

  /** Leaves out the projections the projections process reports failed, as its own runner does. */
  async waitFor(position: Position, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const stalled = stalledProjections(await this.status.failures());
      const names = this.projectionNames.filter((n) => !stalled.has(n));
      const checkpoints = await Promise.all(names.map((n) => this.readStore.getCheckpoint(n)));
      if (checkpoints.every((c) => c !== undefined && c >= position)) return true;
      if (Date.now() >= deadline) return false;
      await sleep(this.intervalMs);
    }
  }
}
