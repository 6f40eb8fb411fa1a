import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { CheckpointedSubscription, HandlerFailed, type LaneApplier, type Subscriber } from '../stores/eventstore/checkpointedSubscription';
import type { EventStore, Position } from '../stores/eventstore/eventStore';
import type { ReadStore } from '../stores/readstore/readStore';
import { SqliteReadStore } from '../stores/readstore/sqliteReadStore';
import { WriteBuffer } from '../stores/readstore/writeBuffer';
import { erasingEventTypes } from '../domain/personalData';
import type { Projection } from './projection';
import { clearFailure, lowestCheckpoint, storeFailure, StoredProjectionStatus, type ProjectionFailure, type ProjectionHealth } from './projectionStatus';

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

const SQLITE_BATCH_SIZE = 100;

/** Removes every copy of what the committed writes deleted from the read store's files (see ReadStore.scrubDeleted). */
type Scrub = () => Promise<void>;

function scrubberOf(readStore: ReadStore, log: Logger): Scrub {
  return async () => {
    if (!readStore.scrubDeleted || (await readStore.scrubDeleted())) return;
    log.warn("a forgotten user's data may remain in the read models' write-ahead log: readers kept it from being truncated; the next forget truncates it");
  };
}

interface ProjectionSubscriber extends Subscriber {
  readonly projection: Projection;
}

const subscriberOf = (projection: Projection): ProjectionSubscriber => ({
  name: projection.name,
  checkpoint: projection.name,
  handles: projection.handles,
  writes: projection.writes,
  follows: projection.follows,
  projection,
});

export interface ProjectionRunnerOptions {
  /** At most this many events are applied and committed together (default DEFAULT_BATCH_SIZE, SQLITE_BATCH_SIZE into SQLite). */
  batchSize?: number;
  /**
   * true (the default): a batch's writes are held in a WriteBuffer and committed with the lane's
   * checkpoints in one ReadStore.commit. false: each handler writes straight to the store and each
   * applied event's checkpoint is stored after it (how the runner worked before batches).
   */
  buffered?: boolean;
}

/**
 * Applies a batch to a lane through a WriteBuffer: one commit of every changed document and the
 * members' checkpoints. A handler that throws has its own changes to the buffer rolled back; what
 * the lane applied before it (other members included, within the same event) is committed, so the
 * failure is reported, and retried, at its own event.
 */
function bufferedApplier(readStore: ReadStore, projections: readonly Projection[], scrub: Scrub): LaneApplier<ProjectionSubscriber> {
  const writesOf = (name: string) => [...(projections.find((p) => p.name === name)?.writes ?? [])];
  return async (members, events, commit) => {
    // Its own collections and those of the projections it follows (samples: the project documents'
    // data summaries). Lanes apply one at a time, so no other lane writes those documents meanwhile.
    const owned = new Set(members.flatMap((m) => [...m.subscriber.writes, ...[...m.subscriber.follows].flatMap(writesOf)]));
    const buffer = new WriteBuffer(readStore, owned, (ops) => commit(ops, []));
    const reached = members.map((m) => m.applied);
    let handled = false;
    let erased = false;
    const positions = () => members.flatMap((m, i) => (reached[i] !== undefined && reached[i] !== m.applied ? [[m, reached[i]!] as const] : []));
    for (const event of events) {
      for (const [i, member] of members.entries()) {
        const at = reached[i];
        if (at !== undefined && event.position <= at) continue;
        if (member.subscriber.handles.has(event.type)) {
          handled = true;
          const savepoint = buffer.savepoint();
          try {
            await member.subscriber.projection.apply(event, buffer);
          } catch (error) {
            buffer.rollback(savepoint);
            await commit(buffer.takeOps(), positions());
            if (erased) await scrub();
            throw new HandlerFailed(i, event, error);
          }
          erased ||= erasingEventTypes.has(event.type);
        }
        reached[i] = event.position;
      }
    }
    const ops = buffer.takeOps();
    // Nothing handled: the checkpoints move with the next flush, not with a write per batch.
    if (!handled && ops.length === 0) {
      members.forEach((m, i) => (m.applied = reached[i]));
      return;
    }
    await commit(ops, positions());
    // Before the runner counts the batch applied: an answer that waited for it finds the bytes gone.
    if (erased) await scrub();
  };
}

/** Each handler writes to the store directly, each applied event's checkpoint stored right after it. */
function directApplier(readStore: ReadStore, scrub: Scrub): LaneApplier<ProjectionSubscriber> {
  return async (members, events, commit) => {
    for (const event of events) {
      for (const [i, member] of members.entries()) {
        if (member.applied !== undefined && event.position <= member.applied) continue;
        if (!member.subscriber.handles.has(event.type)) {
          member.applied = event.position;
          continue;
        }
        try {
          await member.subscriber.projection.apply(event, readStore);
        } catch (error) {
          throw new HandlerFailed(i, event, error);
        }
        await commit([], [[member, event.position]]);
        if (erasingEventTypes.has(event.type)) await scrub();
      }
    }
  };
}

/**
 * Runs projections over one checkpointed subscription to the whole log (CheckpointedSubscription),
 * each with its own checkpoint, applying events in batches: what the subscription has delivered,
 * up to `batchSize`, with one commit per lane and batch (see bufferedApplier).
 *
 * A projection whose handler fails on an event is isolated with the projections that share its
 * documents (its lane); the others go on. The failure is logged once at error level and reported by
 * `failures()` and in the read store (projection_status), with the event's position, type and
 * stream; the lane is retried from its own checkpoints with a doubling backoff, so nothing is ever
 * skipped.
 *
 * Read your writes waits (`waitFor`, and so `start()`) leave failed lanes out: a write whose own
 * read model is failed is durable and answers once the healthy read models have applied it; its
 * own read model shows it when the failure is fixed, and /health reports the failure meanwhile.
 */
export class ProjectionRunner implements ReadModelSync, ProjectionHealth {
  private readonly subscription: CheckpointedSubscription<ProjectionSubscriber>;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly events: EventStore,
    private readonly readStore: ReadStore,
    projections: readonly Projection[],
    log: Logger,
    retryDelayMs = 1000,
    maxRetryDelayMs = 60_000,
    options: ProjectionRunnerOptions = {},
  ) {
    const scrub = scrubberOf(readStore, log);
    this.subscription = new CheckpointedSubscription({
      events,
      readStore,
      subscribers: projections.map(subscriberOf),
      apply: options.buffered === false ? directApplier(readStore, scrub) : bufferedApplier(readStore, projections, scrub),
      log,
      kind: 'projection',
      retryDelayMs,
      maxRetryDelayMs,
      // Into SQLite (no round trips to amortize), batches of 100 took 8% less CPU than 500 in a
      // rebuild and 11% less in a first start: fewer documents held across young-generation GCs.
      ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : readStore instanceof SqliteReadStore ? { batchSize: SQLITE_BATCH_SIZE } : {}),
      failures: {
        load: async () => (await new StoredProjectionStatus(readStore).failures()).map((f) => ({ name: f.projection, position: BigInt(f.position) })),
        store: ({ name, ...failure }) => storeFailure(readStore, { projection: name, ...failure }),
        clear: (name) => clearFailure(readStore, name),
      },
    });
  }

  /**
   * Starts the run and resolves once the read models have caught up with the log as it was at the
   * call; a projection that fails on the way does not hold it up (see `failures()`). A checkpoint
   * of another log (ForeignCheckpointError) stops the start, saying why.
   */
  async start(): Promise<void> {
    const head = await this.events.headPosition();
    // A first start into an empty SQLite store (no checkpoint, no document) fills the tables first
    // and builds their indexes once, at the end of the catch-up, as a rebuild does.
    // A start stopped before it caught up leaves them deferred: the next start builds them at its end,
    // rather than this stop spend seconds on them.
    const deferred = head !== undefined && this.readStore instanceof SqliteReadStore && this.readStore.deferIndexesWhileEmpty();
    await this.subscription.start();
    const caughtUp = head === undefined || (await this.waitFor(head, Number.POSITIVE_INFINITY));
    if (deferred && caughtUp) (this.readStore as SqliteReadStore).buildDeferredIndexes();
  }

  /** Stops after the batch being applied, its checkpoint stored; later calls wait for the same stop. */
  stop(): Promise<void> {
    return (this.stopping ??= this.subscription.stop());
  }

  /** The position every healthy projection has applied, or undefined before the first event. */
  get appliedPosition(): Position | undefined {
    return this.subscription.appliedPosition;
  }

  async failures(): Promise<ProjectionFailure[]> {
    return this.subscription.failures().map(({ name, ...failure }) => ({ projection: name, ...failure }));
  }

  waitFor(position: Position, timeoutMs: number): Promise<boolean> {
    return this.subscription.waitFor(position, timeoutMs);
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
      if ((await lowestCheckpoint(this.readStore, this.status, this.projectionNames, position)) >= position) return true;
      if (Date.now() >= deadline) return false;
      await sleep(this.intervalMs);
    }
  }
}
